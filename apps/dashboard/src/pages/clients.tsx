/**
 * @module dashboard/pages/clients
 * OAuth clients and service accounts (`/v1/admin/clients`, `create_client`, `update_client`,
 * `rotate_client_secret`, `delete_client`): create one with its scopes, redirect URIs and grant
 * types (its secret is shown once, with a copy button), edit it, rotate its secret (shown once
 * again), deactivate or activate it, and delete it after a confirmation. The form also sets the
 * logout URIs: post-logout redirect URIs (OpenID Connect RP-Initiated Logout 1.0 §2; emptied on an edit,
 * they are removed with `clear_post_logout_redirect_uris`) and the
 * back-channel (Back-Channel Logout 1.0 §2.2) and front-channel (Front-Channel Logout 1.0 §2)
 * logout URIs with their `sid` switches.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { Res } from '../api.ts';
import { t } from '../strings.ts';
import { Area, Check, Confirm, Field, lines, Messages, OnceSecret, ListEnd, Title, useAction, useCall, useConsole } from '../ui.tsx';

const LIMIT = 10;
type Client = NonNullable<Res<'create_client'>['client']>;
/** The grant types a client may be given (RFC 6749, RFC 8693, RFC 8628). */
const GRANTS = ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange', 'urn:ietf:params:oauth:grant-type:device_code'] as const;
const BLANK = {
  name: '', description: '', scopes: '', redirects: '', grants: ['client_credentials'] as string[], is_public: false, is_first_party: false,
  post_logout: '', backchannel_logout_uri: '', backchannel_logout_session_required: false, frontchannel_logout_uri: '', frontchannel_logout_session_required: false,
};

const words = (s: string): string[] => s.split(/[\s,]+/).map((w) => w.trim()).filter(Boolean);

export function Clients(): JSX.Element {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const { data, error: loadError, loading } = useCall('clients', { pagination: { page, limit: LIMIT } });
  const { error, status, busy, run } = useAction();
  const [form, setForm] = useState(BLANK);
  const [editing, setEditing] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<Client | null>(null);
  const set = <K extends keyof typeof BLANK>(k: K) => (v: (typeof BLANK)[K]) => setForm({ ...form, [k]: v });
  const fields = () => ({
    name: form.name, description: form.description, allowed_scopes: words(form.scopes),
    redirect_uris: lines(form.redirects), grant_types: form.grants, post_logout_redirect_uris: lines(form.post_logout),
    is_first_party: form.is_first_party,
    // OpenID Connect Back-Channel Logout 1.0 §2.2 and Front-Channel Logout 1.0 §2: an empty URI removes it
    backchannel_logout_uri: form.backchannel_logout_uri.trim(), backchannel_logout_session_required: form.backchannel_logout_session_required,
    frontchannel_logout_uri: form.frontchannel_logout_uri.trim(), frontchannel_logout_session_required: form.frontchannel_logout_session_required,
  });
  const submit = (e: Event): void => {
    e.preventDefault();
    run(async () => {
      if (editing) {
        // an empty list means "unchanged" on the wire: an emptied field asks for the URIs' removal
        const clear = lines(form.post_logout).length === 0;
        await api.call('update_client', { id: editing, ...fields(), clear_post_logout_redirect_uris: clear });
        setEditing(null);
        setForm(BLANK);
        return t.clients.updated;
      }
      const created = await api.call('create_client', { ...fields(), is_public: form.is_public });
      setSecret(created.client_secret || null);
      setForm(BLANK);
      return t.clients.created;
    });
  };

  return (
    <main id="main" aria-busy={loading || busy ? 'true' : 'false'}>
      <Title>{t.clients.title}</Title>
      <Messages error={error || loadError} status={status} />
      {secret ? <OnceSecret title={t.clients.secretTitle} note={t.clients.secretOnce} secret={secret} onDone={() => setSecret(null)} /> : null}
      <section aria-labelledby="cl-form">
        <h2 id="cl-form">{editing ? t.clients.edit : t.clients.add}</h2>
        <form onSubmit={submit}>
          <Field id="cl-name" label={t.clients.name} value={form.name} onInput={set('name')} required />
          <Field id="cl-description" label={t.clients.description} value={form.description} onInput={set('description')} />
          <Field id="cl-scopes" label={t.clients.scopes} value={form.scopes} onInput={set('scopes')} hint={t.clients.scopesHint} />
          <Area id="cl-redirects" label={t.clients.redirectUris} value={form.redirects} onInput={set('redirects')} hint={t.clients.redirectHint} />
          <fieldset>
            <legend>{t.clients.grantTypes}</legend>
            {GRANTS.map((g, i) => (
              <Check key={g} id={`cl-grant-${i}`} label={g} checked={form.grants.includes(g)}
                onChange={(on) => set('grants')(on ? [...form.grants, g] : form.grants.filter((x) => x !== g))} />
            ))}
          </fieldset>
          <fieldset>
            <legend>{t.clients.logout}</legend>
            <Area id="cl-post-logout" label={t.clients.postLogout} value={form.post_logout} onInput={set('post_logout')} hint={editing ? t.clients.postLogoutKeep : t.clients.redirectHint} />
            <Field id="cl-backchannel" label={t.clients.backchannel} value={form.backchannel_logout_uri} onInput={set('backchannel_logout_uri')} hint={t.clients.backchannelHint} />
            <Check id="cl-backchannel-sid" label={t.clients.backchannelSid} checked={form.backchannel_logout_session_required} onChange={set('backchannel_logout_session_required')} />
            <Field id="cl-frontchannel" label={t.clients.frontchannel} value={form.frontchannel_logout_uri} onInput={set('frontchannel_logout_uri')} hint={t.clients.frontchannelHint} />
            <Check id="cl-frontchannel-sid" label={t.clients.frontchannelSid} checked={form.frontchannel_logout_session_required} onChange={set('frontchannel_logout_session_required')} />
          </fieldset>
          {editing ? null : <Check id="cl-public" label={t.clients.isPublic} checked={form.is_public} onChange={set('is_public')} />}
          <Check id="cl-first-party" label={t.clients.firstParty} checked={form.is_first_party} onChange={set('is_first_party')} />
          <div class="row">
            <button type="submit" disabled={busy}>{editing ? t.clients.save : t.clients.create}</button>
            {editing ? <button type="button" class="secondary" onClick={() => { setEditing(null); setForm(BLANK); }}>{t.common.cancel}</button> : null}
          </div>
        </form>
      </section>
      {confirm ? (
        <Confirm id="cl-confirm" text={t.clients.confirmDelete(confirm.name)} yes={t.clients.deleteYes} onNo={() => setConfirm(null)}
          onYes={() => { const id = confirm.id; setConfirm(null); run(async () => { await api.call('delete_client', { id }); return t.clients.deleted; }); }} />
      ) : null}
      {data ? (
        <>
          <table>
            <caption class="visually-hidden">{t.clients.table}</caption>
            <thead><tr><th scope="col">{t.clients.name}</th><th scope="col">{t.clients.clientId}</th><th scope="col">{t.clients.grantTypes}</th><th scope="col">{t.clients.active}</th><th scope="col">{t.clients.actions}</th></tr></thead>
            <tbody>
              {data.clients.map((c) => (
                <tr key={c.id}>
                  <td>{c.name}{c.description ? <div class="hint">{c.description}</div> : null}</td>
                  <td><code>{c.client_id}</code></td>
                  <td class="wrap">{c.grant_types.join(', ')}</td>
                  <td>{c.is_active ? t.common.yes : t.common.no}</td>
                  <td class="actions">
                    <button type="button" class="link" aria-label={`${t.clients.edit} ${c.name}`} onClick={() => {
                      setEditing(c.id);
                      setForm({ name: c.name, description: c.description ?? '', scopes: c.allowed_scopes.join(' '), redirects: c.redirect_uris.join('\n'), grants: [...c.grant_types], is_public: c.is_public, is_first_party: c.is_first_party,
                        post_logout: c.post_logout_redirect_uris.join('\n'), backchannel_logout_uri: c.backchannel_logout_uri ?? '', backchannel_logout_session_required: c.backchannel_logout_session_required,
                        frontchannel_logout_uri: c.frontchannel_logout_uri ?? '', frontchannel_logout_session_required: c.frontchannel_logout_session_required });
                      document.getElementById('cl-name')?.focus();
                    }}>{t.clients.editButton}</button>
                    {c.is_public ? null : (
                      <button type="button" class="link" aria-label={`${t.clients.rotate} ${c.name}`} onClick={() => run(async () => {
                        const r = await api.call('rotate_client_secret', { id: c.id });
                        setSecret(r.client_secret);
                        return t.clients.rotated;
                      })}>{t.clients.rotate}</button>
                    )}
                    <button type="button" class="link" aria-label={`${c.is_active ? t.clients.deactivate : t.clients.activate} ${c.name}`}
                      onClick={() => run(async () => { await api.call('update_client', { id: c.id, is_active: !c.is_active, allowed_scopes: [], redirect_uris: [], grant_types: [], post_logout_redirect_uris: [] }); return t.clients.updated; })}>
                      {c.is_active ? t.clients.deactivate : t.clients.activate}
                    </button>
                    <button type="button" class="link danger" aria-label={`${t.clients.delete} ${c.name}`} onClick={() => setConfirm(c)}>{t.clients.delete}</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <ListEnd rows={data.clients.length} empty={t.clients.empty} pagination={data.pagination} page={page} limit={LIMIT} noun={t.clients.noun} onPage={setPage} />
        </>
      ) : null}
    </main>
  );
}
