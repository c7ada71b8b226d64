/**
 * @module dashboard/pages/organizations
 * Organizations (`organizations`, `create_organization`, `organization`, `update_organization`,
 * `delete_organization`) and one organization's page (`/dashboard/organizations/<id>`):
 * - members (`org_members`, `add_org_member` by the user's email address, a member's roles edited in
 *   place with `update_org_member`, `remove_org_member`),
 *   with their org roles (`service:org_admin` makes an org admin);
 * - domains (`request_org_domain` shows the DNS TXT record to publish, `verify_org_domain` looks it
 *   up, `add_verified_org_domain` skips DNS, `delete_org_domain`);
 * - the OIDC and SAML SSO connections (one of each per organization: create, edit, delete);
 * - the SCIM endpoint (`create_scim_endpoint` and `rotate_scim_token` show the bearer token once,
 *   `delete_scim_endpoint`) with the base URL a directory calls;
 * - the SAML identity-provider role: service providers (create, from pasted metadata with
 *   `import_saml_sp_metadata`, delete) and the signing keys (`rotate_saml_idp_cert`,
 *   `retire_saml_idp_key`), with the metadata URL a service provider imports.
 */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Api, Res } from '../api.ts';
import { t } from '../strings.ts';
import {
  Area, Check, Confirm, Field, flash, ListEnd, Messages, notFound, OnceSecret, Title, useAction, useCall, useConsole, useLoad, when,
} from '../ui.tsx';

const LIMIT = 10;
type Org = Res<'organization'>;

const orgLabel = (o: Org): string => o.display_name || o.name;

/** The list of organizations and the create form; a new organization opens its page. */
export function Organizations(): JSX.Element {
  const { api, href, navigate } = useConsole();
  const [page, setPage] = useState(1);
  const { data, error: loadError, loading } = useCall('organizations', { pagination: { page, limit: LIMIT } });
  const { error, status, busy, run } = useAction();
  const [form, setForm] = useState({ name: '', display_name: '' });
  const open = (o: Org): void => navigate(`/organizations/${encodeURIComponent(o.id)}`);
  return (
    <main id="main" aria-busy={loading || busy ? 'true' : 'false'}>
      <Title>{t.orgs.title}</Title>
      <Messages error={error || loadError} status={status || flash()} />
      <section aria-labelledby="org-add">
        <h2 id="org-add">{t.orgs.add}</h2>
        <form onSubmit={(e) => {
          e.preventDefault();
          run(async () => {
            const created = await api.call('create_organization', { name: form.name, display_name: form.display_name || undefined });
            navigate(`/organizations/${encodeURIComponent(created.id)}`, t.orgs.created(created.name));
            return '';
          });
        }}>
          <div class="grid">
            <Field id="org-name" label={t.orgs.name} value={form.name} onInput={(v) => setForm({ ...form, name: v })} hint={t.orgs.nameHint} required />
            <Field id="org-display" label={t.orgs.displayName} value={form.display_name} onInput={(v) => setForm({ ...form, display_name: v })} />
          </div>
          <button type="submit" disabled={busy}>{t.orgs.create}</button>
        </form>
      </section>
      {data ? (
        <>
          <table>
            <caption class="visually-hidden">{t.orgs.table}</caption>
            <thead><tr><th scope="col">{t.orgs.name}</th><th scope="col">{t.orgs.displayName}</th><th scope="col">{t.orgs.enabled}</th><th scope="col">{t.orgs.created_at}</th></tr></thead>
            <tbody>
              {data.organizations.map((o) => (
                <tr key={o.id}>
                  <td><a href={href(`/organizations/${encodeURIComponent(o.id)}`)} onClick={(e) => { e.preventDefault(); open(o); }}>{o.name}</a></td>
                  <td>{o.display_name || t.common.none}</td>
                  <td>{o.enabled ? t.common.yes : t.common.no}</td>
                  <td>{when(o.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <ListEnd rows={data.organizations.length} empty={t.orgs.empty} pagination={data.pagination} page={page} limit={LIMIT} noun={t.orgs.noun} onPage={setPage} />
        </>
      ) : null}
    </main>
  );
}

/** One organization: its settings and every org-scoped resource, each section with its own messages. */
export function OrganizationDetail({ id }: { id: string }): JSX.Element {
  const { href, navigate } = useConsole();
  const { data: org, error: loadError, loading } = useCall('organization', { id });
  return (
    <main id="main" aria-busy={loading ? 'true' : 'false'}>
      <p><a href={href('/organizations')} onClick={(e) => { e.preventDefault(); navigate('/organizations'); }}>{t.orgs.back}</a></p>
      <Title>{org ? orgLabel(org) : t.orgs.title}</Title>
      <Messages error={loadError} status={flash()} />
      {org ? (
        <>
          <Settings org={org} />
          <Members org={org} />
          <Domains org={org} />
          <OidcConnection org={org} />
          <SamlConnection org={org} />
          <Scim org={org} />
          <SamlIdp org={org} />
        </>
      ) : null}
    </main>
  );
}

function Settings({ org }: { org: Org }): JSX.Element {
  const { api, navigate } = useConsole();
  const { error, status, busy, run } = useAction();
  const [form, setForm] = useState({ name: org.name, display_name: org.display_name ?? '', enabled: org.enabled });
  const [confirm, setConfirm] = useState(false);
  useEffect(() => setForm({ name: org.name, display_name: org.display_name ?? '', enabled: org.enabled }), [org]);
  return (
    <section aria-labelledby="org-settings">
      <h2 id="org-settings">{t.orgs.settings}</h2>
      <Messages error={error} status={status} />
      <dl class="facts"><dt>{t.orgs.id}</dt><dd><code>{org.id}</code></dd><dt>{t.orgs.created_at}</dt><dd>{when(org.created_at)}</dd></dl>
      <form onSubmit={(e) => {
        e.preventDefault();
        run(async () => { await api.call('update_organization', { id: org.id, ...form }); return t.orgs.saved; });
      }}>
        <div class="grid">
          <Field id="os-name" label={t.orgs.name} value={form.name} onInput={(v) => setForm({ ...form, name: v })} hint={t.orgs.renameHint} required />
          <Field id="os-display" label={t.orgs.displayName} value={form.display_name} onInput={(v) => setForm({ ...form, display_name: v })} />
        </div>
        <Check id="os-enabled" label={t.orgs.enabledHint} checked={form.enabled} onChange={(v) => setForm({ ...form, enabled: v })} />
        <div class="row">
          <button type="submit" disabled={busy}>{t.orgs.save}</button>
          <button type="button" class="danger" onClick={() => setConfirm(true)}>{t.orgs.delete}</button>
        </div>
      </form>
      {confirm ? (
        <Confirm id="os-confirm" text={t.orgs.confirmDelete(org.name)} yes={t.orgs.deleteYes} onNo={() => setConfirm(false)}
          onYes={() => {
            setConfirm(false);
            run(async () => { await api.call('delete_organization', { id: org.id }); navigate('/organizations', t.orgs.deleted(org.name)); return ''; });
          }} />
      ) : null}
    </section>
  );
}

/** The user id of an email address (`user`), or the text itself when it is not an address (an id). */
async function userIdOf(api: Api, who: string): Promise<string> {
  return who.includes('@') ? (await api.call('user', { email: who })).id : who;
}

function Members({ org }: { org: Org }): JSX.Element {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const { data, error: loadError } = useCall('org_members', { org_id: org.id, pagination: { page, limit: LIMIT } });
  const { error, status, busy, run } = useAction();
  const [form, setForm] = useState({ who: '', roles: '' });
  const [editing, setEditing] = useState<{ user_id: string; roles: string } | null>(null);
  const roleList = (s: string): string[] => s.split(',').map((r) => r.trim()).filter(Boolean);
  return (
    <section aria-labelledby="om-title">
      <h2 id="om-title">{t.orgs.members}</h2>
      <Messages error={error || loadError} status={status} />
      <form onSubmit={(e) => {
        e.preventDefault();
        run(async () => {
          const user_id = await userIdOf(api, form.who.trim());
          await api.call('add_org_member', { org_id: org.id, user_id, roles: roleList(form.roles) });
          setForm({ who: '', roles: '' });
          return t.orgs.memberAdded;
        });
      }}>
        <div class="grid">
          <Field id="om-who" label={t.orgs.memberWho} value={form.who} onInput={(v) => setForm({ ...form, who: v })} hint={t.orgs.memberWhoHint} required />
          <Field id="om-roles" label={t.orgs.memberRoles} value={form.roles} onInput={(v) => setForm({ ...form, roles: v })} hint={t.orgs.memberRolesHint} />
        </div>
        <button type="submit" disabled={busy}>{t.orgs.addMember}</button>
      </form>
      {data ? (
        <>
          <table>
            <caption class="visually-hidden">{t.orgs.members}</caption>
            <thead><tr><th scope="col">{t.orgs.memberEmail}</th><th scope="col">{t.orgs.memberRoles}</th><th scope="col">{t.orgs.since}</th><th scope="col">{t.orgs.actions}</th></tr></thead>
            <tbody>
              {data.org_members.map((m) => (
                <tr key={m.id}>
                  <td>{m.email || m.user_id}</td>
                  <td>{editing?.user_id === m.user_id ? (
                    <form class="row" onSubmit={(e) => {
                      e.preventDefault();
                      const roles = roleList(editing.roles);
                      run(async () => { await api.call('update_org_member', { org_id: org.id, user_id: m.user_id, roles }); setEditing(null); return t.orgs.rolesSaved; });
                    }}>
                      <Field id={`om-edit-${m.user_id}`} label={t.orgs.rolesOf(m.email || m.user_id)} value={editing.roles} onInput={(v) => setEditing({ ...editing, roles: v })} hint={t.orgs.memberRolesHint} />
                      <button type="submit" disabled={busy}>{t.orgs.saveRoles}</button>
                      <button type="button" class="secondary" onClick={() => setEditing(null)}>{t.common.cancel}</button>
                    </form>
                  ) : m.roles.join(', ') || t.common.none}</td>
                  <td>{when(m.created_at)}</td>
                  <td><button type="button" class="link" aria-label={`${t.orgs.editRoles} ${m.email || m.user_id}`}
                    onClick={() => setEditing({ user_id: m.user_id, roles: m.roles.join(', ') })}>{t.orgs.editRoles}</button>
                    <button type="button" class="link danger" aria-label={`${t.orgs.remove} ${m.email || m.user_id}`}
                    onClick={() => run(async () => { await api.call('remove_org_member', { org_id: org.id, user_id: m.user_id }); return t.orgs.memberRemoved; })}>{t.orgs.remove}</button></td>
                </tr>
              ))}
            </tbody>
          </table>
          <ListEnd rows={data.org_members.length} empty={t.orgs.noMembers} pagination={data.pagination} page={page} limit={LIMIT} noun={t.orgs.membersNoun} onPage={setPage} />
        </>
      ) : null}
    </section>
  );
}

function Domains({ org }: { org: Org }): JSX.Element {
  const { api } = useConsole();
  const { data, error: loadError } = useCall('org_domains', { org_id: org.id, pagination: { page: 1, limit: 100 } });
  const { error, status, busy, run } = useAction();
  const [domain, setDomain] = useState('');
  const [challenge, setChallenge] = useState<Res<'request_org_domain'> | null>(null);
  return (
    <section aria-labelledby="od-title">
      <h2 id="od-title">{t.orgs.domains}</h2>
      <p class="hint">{t.orgs.domainsHint}</p>
      <Messages error={error || loadError} status={status} />
      <form onSubmit={(e) => e.preventDefault()}>
        <Field id="od-domain" label={t.orgs.domain} value={domain} onInput={setDomain} hint={t.orgs.domainHint} />
        <div class="row">
          <button type="button" disabled={busy || !domain} onClick={() => run(async () => {
            setChallenge(await api.call('request_org_domain', { org_id: org.id, domain }));
            setDomain('');
            return t.orgs.domainRequested;
          })}>{t.orgs.requestDomain}</button>
          <button type="button" class="secondary" disabled={busy || !domain} onClick={() => run(async () => {
            await api.call('add_verified_org_domain', { org_id: org.id, domain });
            setDomain('');
            return t.orgs.domainAdded;
          })}>{t.orgs.addVerified}</button>
        </div>
      </form>
      {challenge ? (
        <div class="secret-box" data-testid="domain-challenge">
          <h3>{t.orgs.publish(challenge.domain)}</h3>
          <dl class="facts">
            <dt>{t.orgs.recordType}</dt><dd><code>{challenge.record_type}</code></dd>
            <dt>{t.orgs.recordName}</dt><dd><code>{challenge.record_name}</code></dd>
            <dt>{t.orgs.recordValue}</dt><dd><code class="secret">{challenge.record_value}</code></dd>
            <dt>{t.orgs.expires}</dt><dd>{when(challenge.expires_at)}</dd>
          </dl>
        </div>
      ) : null}
      {data ? (
        <>
          <table>
            <caption class="visually-hidden">{t.orgs.domains}</caption>
            <thead><tr><th scope="col">{t.orgs.domain}</th><th scope="col">{t.orgs.domainStatus}</th><th scope="col">{t.orgs.actions}</th></tr></thead>
            <tbody>
              {data.org_domains.map((d) => (
                <tr key={d.domain}>
                  <td>{d.domain}</td>
                  <td>{d.verified_at ? t.orgs.verifiedOn(when(d.verified_at)) : t.orgs.pendingUntil(when(d.challenge_expires_at))}</td>
                  <td class="actions">
                    {d.verified_at ? null : (
                      <button type="button" class="link" aria-label={`${t.orgs.verify} ${d.domain}`}
                        onClick={() => run(async () => { await api.call('verify_org_domain', { org_id: org.id, domain: d.domain }); return t.orgs.domainVerified(d.domain); })}>{t.orgs.verify}</button>
                    )}
                    <button type="button" class="link danger" aria-label={`${t.orgs.remove} ${d.domain}`}
                      onClick={() => run(async () => { await api.call('delete_org_domain', { org_id: org.id, domain: d.domain }); return t.orgs.domainDeleted; })}>{t.orgs.remove}</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {data.org_domains.length === 0 ? <p>{t.orgs.noDomains}</p> : null}
        </>
      ) : null}
    </section>
  );
}

/**
 * Loads an org's single resource (a connection, the SCIM endpoint) with {@link useLoad}; 404 means "none yet" (null).
 * @returns the resource (undefined before the first answer, null when there is none) and the refusal's text
 */
function useOne<O extends 'org_oidc_connection' | 'org_saml_connection' | 'scim_endpoint'>(op: O, orgId: string): [Res<O> | null | undefined, string] {
  const { api } = useConsole();
  const { data, error } = useLoad([op, { org_id: orgId }], async () => {
    try {
      return { one: await api.call(op, { org_id: orgId }) };
    } catch (err) {
      if (notFound(err)) return { one: null };
      throw err;
    }
  });
  return [data?.one, error];
}

const OIDC_BLANK = { name: '', issuer_url: '', client_id: '', client_secret: '', scopes: '', redirect_uri: '', is_active: true };

function OidcConnection({ org }: { org: Org }): JSX.Element {
  const { api } = useConsole();
  const [conn, loadError] = useOne('org_oidc_connection', org.id);
  const { error, status, busy, run } = useAction();
  const [form, setForm] = useState(OIDC_BLANK);
  const [confirm, setConfirm] = useState(false);
  useEffect(() => {
    setForm(conn ? { name: conn.name, issuer_url: conn.issuer_url, client_id: conn.sso_client_id, client_secret: '', scopes: conn.scopes ?? '', redirect_uri: conn.redirect_uri ?? '', is_active: conn.is_active } : OIDC_BLANK);
  }, [conn]);
  const set = <K extends keyof typeof OIDC_BLANK>(k: K) => (v: (typeof OIDC_BLANK)[K]) => setForm({ ...form, [k]: v });
  return (
    <section aria-labelledby="oo-title">
      <h2 id="oo-title">{t.orgs.oidc}</h2>
      <Messages error={error || loadError} status={status} />
      {conn === undefined ? null : (
        <form onSubmit={(e) => {
          e.preventDefault();
          run(async () => {
            const opt = { scopes: form.scopes || undefined, redirect_uri: form.redirect_uri || undefined };
            if (conn) {
              await api.call('update_org_oidc_connection', { id: conn.id, name: form.name, issuer_url: form.issuer_url, client_id: form.client_id, client_secret: form.client_secret || undefined, is_active: form.is_active, ...opt });
              return t.orgs.connectionSaved;
            }
            await api.call('create_org_oidc_connection', { org_id: org.id, name: form.name, issuer_url: form.issuer_url, client_id: form.client_id, client_secret: form.client_secret, ...opt });
            return t.orgs.connectionCreated;
          });
        }}>
          <p class="hint">{conn ? t.orgs.connectionOf(conn.id) : t.orgs.noOidc}</p>
          <div class="grid">
            <Field id="oo-name" label={t.orgs.connName} value={form.name} onInput={set('name')} required />
            <Field id="oo-issuer" label={t.orgs.issuerUrl} value={form.issuer_url} onInput={set('issuer_url')} hint={t.orgs.issuerHint} required />
            <Field id="oo-client" label={t.orgs.ssoClientId} value={form.client_id} onInput={set('client_id')} required />
            <Field id="oo-secret" label={t.orgs.ssoClientSecret} type="password" value={form.client_secret} onInput={set('client_secret')} hint={conn ? t.orgs.keepSecret : undefined} required={!conn} />
            <Field id="oo-scopes" label={t.orgs.ssoScopes} value={form.scopes} onInput={set('scopes')} hint={t.orgs.ssoScopesHint} />
            <Field id="oo-redirect" label={t.orgs.ssoRedirect} value={form.redirect_uri} onInput={set('redirect_uri')} hint={t.orgs.ssoRedirectHint} />
          </div>
          {conn ? <Check id="oo-active" label={t.orgs.connActive} checked={form.is_active} onChange={set('is_active')} /> : null}
          <div class="row">
            <button type="submit" disabled={busy}>{conn ? t.orgs.saveOidc : t.orgs.createOidc}</button>
            {conn ? <button type="button" class="danger" onClick={() => setConfirm(true)}>{t.orgs.deleteOidc}</button> : null}
          </div>
        </form>
      )}
      {confirm && conn ? (
        <Confirm id="oo-confirm" text={t.orgs.confirmConnection(conn.name)} yes={t.orgs.deleteConnYes} onNo={() => setConfirm(false)}
          onYes={() => { setConfirm(false); run(async () => { await api.call('delete_org_oidc_connection', { id: conn.id }); return t.orgs.connectionDeleted; }); }} />
      ) : null}
    </section>
  );
}

const SAML_BLANK = { name: '', idp_entity_id: '', idp_sso_url: '', idp_certificate: '', attribute_mapping: '', allow_idp_initiated: false, is_active: true };

function SamlConnection({ org }: { org: Org }): JSX.Element {
  const { api } = useConsole();
  const [conn, loadError] = useOne('org_saml_connection', org.id);
  const { error, status, busy, run } = useAction();
  const [form, setForm] = useState(SAML_BLANK);
  const [confirm, setConfirm] = useState(false);
  useEffect(() => {
    setForm(conn ? {
      name: conn.name, idp_entity_id: conn.idp_entity_id, idp_sso_url: conn.idp_sso_url ?? '', idp_certificate: '', attribute_mapping: conn.attribute_mapping ?? '',
      allow_idp_initiated: conn.allow_idp_initiated, is_active: conn.is_active,
    } : SAML_BLANK);
  }, [conn]);
  const set = <K extends keyof typeof SAML_BLANK>(k: K) => (v: (typeof SAML_BLANK)[K]) => setForm({ ...form, [k]: v });
  return (
    <section aria-labelledby="os2-title">
      <h2 id="os2-title">{t.orgs.saml}</h2>
      <Messages error={error || loadError} status={status} />
      {conn === undefined ? null : (
        <form onSubmit={(e) => {
          e.preventDefault();
          run(async () => {
            const fields = {
              name: form.name, idp_entity_id: form.idp_entity_id, idp_sso_url: form.idp_sso_url, attribute_mapping: form.attribute_mapping || undefined,
              allow_idp_initiated: form.allow_idp_initiated,
            };
            if (conn) {
              await api.call('update_org_saml_connection', { id: conn.id, ...fields, idp_certificate: form.idp_certificate || undefined, is_active: form.is_active });
              return t.orgs.connectionSaved;
            }
            await api.call('create_org_saml_connection', { org_id: org.id, ...fields, idp_certificate: form.idp_certificate });
            return t.orgs.connectionCreated;
          });
        }}>
          <p class="hint">{conn ? t.orgs.samlUrls(conn.sp_entity_id ?? '', conn.acs_url ?? '') : t.orgs.noSaml}</p>
          <div class="grid">
            <Field id="os2-name" label={t.orgs.connName} value={form.name} onInput={set('name')} required />
            <Field id="os2-entity" label={t.orgs.idpEntityId} value={form.idp_entity_id} onInput={set('idp_entity_id')} required />
            <Field id="os2-sso" label={t.orgs.idpSsoUrl} value={form.idp_sso_url} onInput={set('idp_sso_url')} hint={t.orgs.issuerHint} required />
            <Field id="os2-mapping" label={t.orgs.attributeMapping} value={form.attribute_mapping} onInput={set('attribute_mapping')} hint={t.orgs.attributeMappingHint} />
          </div>
          <Area id="os2-cert" label={t.orgs.idpCertificate} value={form.idp_certificate} onInput={set('idp_certificate')} rows={4} code hint={conn ? t.orgs.keepCert : t.orgs.certHint} required={!conn} />
          <Check id="os2-idp-init" label={t.orgs.allowIdpInitiated} checked={form.allow_idp_initiated} onChange={set('allow_idp_initiated')} />
          {conn ? <Check id="os2-active" label={t.orgs.connActive} checked={form.is_active} onChange={set('is_active')} /> : null}
          <div class="row">
            <button type="submit" disabled={busy}>{conn ? t.orgs.saveSaml : t.orgs.createSaml}</button>
            {conn ? <button type="button" class="danger" onClick={() => setConfirm(true)}>{t.orgs.deleteSaml}</button> : null}
          </div>
        </form>
      )}
      {confirm && conn ? (
        <Confirm id="os2-confirm" text={t.orgs.confirmConnection(conn.name)} yes={t.orgs.deleteConnYes} onNo={() => setConfirm(false)}
          onYes={() => { setConfirm(false); run(async () => { await api.call('delete_org_saml_connection', { id: conn.id }); return t.orgs.connectionDeleted; }); }} />
      ) : null}
    </section>
  );
}

function Scim({ org }: { org: Org }): JSX.Element {
  const { api, config } = useConsole();
  const [endpoint, loadError] = useOne('scim_endpoint', org.id);
  const { error, status, busy, run } = useAction();
  const [token, setToken] = useState<string | null>(null);
  const [confirm, setConfirm] = useState(false);
  const base = `${location.origin}${config.basePath}/scim/v2`;
  return (
    <section aria-labelledby="sc-title">
      <h2 id="sc-title">{t.orgs.scim}</h2>
      <Messages error={error || loadError} status={status} />
      {token ? <OnceSecret title={t.orgs.scimToken} note={t.orgs.scimTokenOnce} secret={token} onDone={() => setToken(null)} /> : null}
      {endpoint === undefined ? null : endpoint ? (
        <>
          <dl class="facts">
            <dt>{t.orgs.scimBase}</dt><dd><code data-testid="scim-base">{base}</code></dd>
            <dt>{t.orgs.enabled}</dt><dd>{endpoint.enabled ? t.common.yes : t.common.no}</dd>
            <dt>{t.orgs.created_at}</dt><dd>{when(endpoint.created_at)}</dd>
          </dl>
          <div class="row">
            <button type="button" disabled={busy} onClick={() => run(async () => {
              setToken((await api.call('rotate_scim_token', { org_id: org.id })).token);
              return t.orgs.scimRotated;
            })}>{t.orgs.rotateScim}</button>
            <button type="button" class="danger" onClick={() => setConfirm(true)}>{t.orgs.deleteScim}</button>
          </div>
        </>
      ) : (
        <>
          <p>{t.orgs.noScim}</p>
          <button type="button" disabled={busy} onClick={() => run(async () => {
            setToken((await api.call('create_scim_endpoint', { org_id: org.id })).token);
            return t.orgs.scimCreated;
          })}>{t.orgs.createScim}</button>
        </>
      )}
      {confirm ? (
        <Confirm id="sc-confirm" text={t.orgs.confirmScim} yes={t.orgs.deleteScimYes} onNo={() => setConfirm(false)}
          onYes={() => { setConfirm(false); run(async () => { await api.call('delete_scim_endpoint', { org_id: org.id }); return t.orgs.scimDeleted; }); }} />
      ) : null}
    </section>
  );
}

const SP_BLANK = { name: '', entity_id: '', acs_url: '', sp_cert_pem: '', allow_idp_initiated: false };

function SamlIdp({ org }: { org: Org }): JSX.Element {
  const { api, config } = useConsole();
  const { data: sps, error: spError } = useCall('saml_service_providers', { org_id: org.id, pagination: { page: 1, limit: 100 } });
  const { data: keys, error: keyError } = useCall('saml_idp_keys', { org_id: org.id });
  const { error, status, busy, run } = useAction();
  const [form, setForm] = useState(SP_BLANK);
  const [xml, setXml] = useState('');
  const set = <K extends keyof typeof SP_BLANK>(k: K) => (v: (typeof SP_BLANK)[K]) => setForm({ ...form, [k]: v });
  const metadata = `${location.origin}${config.basePath}/oauth/saml/${encodeURIComponent(org.name)}/idp/metadata`;
  return (
    <section aria-labelledby="idp-title">
      <h2 id="idp-title">{t.orgs.idp}</h2>
      <p class="hint">{t.orgs.idpHint} <code>{metadata}</code></p>
      <Messages error={error || spError || keyError} status={status} />
      <h3>{t.orgs.serviceProviders}</h3>
      {sps ? (
        <table>
          <caption class="visually-hidden">{t.orgs.serviceProviders}</caption>
          <thead><tr><th scope="col">{t.orgs.connName}</th><th scope="col">{t.orgs.spEntityId}</th><th scope="col">{t.orgs.acsUrl}</th><th scope="col">{t.orgs.actions}</th></tr></thead>
          <tbody>
            {sps.saml_service_providers.map((sp) => (
              <tr key={sp.id}>
                <td>{sp.name}</td><td class="wrap"><code>{sp.entity_id}</code></td><td class="wrap">{sp.acs_url}</td>
                <td><button type="button" class="link danger" aria-label={`${t.orgs.remove} ${sp.name}`}
                  onClick={() => run(async () => { await api.call('delete_saml_service_provider', { id: sp.id }); return t.orgs.spDeleted; })}>{t.orgs.remove}</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {sps && sps.saml_service_providers.length === 0 ? <p>{t.orgs.noSps}</p> : null}
      <form onSubmit={(e) => {
        e.preventDefault();
        run(async () => {
          const parsed = await api.call('import_saml_sp_metadata', { metadata_xml: xml });
          setForm({ ...form, entity_id: parsed.entity_id, acs_url: parsed.acs_url, sp_cert_pem: parsed.certificate ?? '' });
          return t.orgs.imported;
        });
      }}>
        <Area id="idp-xml" label={t.orgs.metadataXml} value={xml} onInput={setXml} rows={4} code hint={t.orgs.metadataHint} required />
        <button type="submit" class="secondary" disabled={busy}>{t.orgs.importMetadata}</button>
      </form>
      <form onSubmit={(e) => {
        e.preventDefault();
        run(async () => {
          await api.call('create_saml_service_provider', { org_id: org.id, ...form, sp_cert_pem: form.sp_cert_pem || undefined });
          setForm(SP_BLANK);
          setXml('');
          return t.orgs.spCreated;
        });
      }}>
        <div class="grid">
          <Field id="idp-name" label={t.orgs.spName} value={form.name} onInput={set('name')} required />
          <Field id="idp-entity" label={t.orgs.spEntityId} value={form.entity_id} onInput={set('entity_id')} required />
          <Field id="idp-acs" label={t.orgs.acsUrl} value={form.acs_url} onInput={set('acs_url')} required />
        </div>
        <Area id="idp-cert" label={t.orgs.spCert} value={form.sp_cert_pem} onInput={set('sp_cert_pem')} rows={3} code />
        <Check id="idp-init" label={t.orgs.allowIdpInitiated} checked={form.allow_idp_initiated} onChange={set('allow_idp_initiated')} />
        <button type="submit" disabled={busy}>{t.orgs.addSp}</button>
      </form>
      <h3>{t.orgs.keys}</h3>
      {keys ? (
        <table>
          <caption class="visually-hidden">{t.orgs.keys}</caption>
          <thead><tr><th scope="col">{t.orgs.keyId}</th><th scope="col">{t.orgs.keyAlgorithm}</th><th scope="col">{t.orgs.keyStatus}</th><th scope="col">{t.orgs.created_at}</th><th scope="col">{t.orgs.actions}</th></tr></thead>
          <tbody>
            {keys.saml_idp_keys.map((k) => (
              <tr key={k.id}>
                <td><code>{k.id}</code></td><td>{k.algorithm}</td><td>{k.status}</td><td>{when(k.created_at)}</td>
                <td>{k.status === 'retired' ? null : (
                  <button type="button" class="link danger" aria-label={`${t.orgs.retire} ${k.id}`}
                    onClick={() => run(async () => (await api.call('retire_saml_idp_key', { id: k.id })).message ?? t.orgs.retired)}>{t.orgs.retire}</button>
                )}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {keys && keys.saml_idp_keys.length === 0 ? <p>{t.orgs.noKeys}</p> : null}
      <button type="button" class="secondary" disabled={busy} onClick={() => run(async () => { await api.call('rotate_saml_idp_cert', { org_id: org.id }); return t.orgs.rotatedKey; })}>{t.orgs.rotateKey}</button>
    </section>
  );
}
