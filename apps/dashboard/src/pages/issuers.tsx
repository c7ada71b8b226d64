/**
 * @module dashboard/pages/issuers
 * Trusted issuers (`trusted_issuers`, `add_trusted_issuer`, `update_trusted_issuer`,
 * `delete_trusted_issuer`): external token issuers (Kubernetes service accounts, SPIFFE JWT-SVIDs,
 * OIDC and cloud workload identities) whose tokens a service account may exchange (RFC 8693 token
 * exchange, RFC 7523 JWT bearer). Add one under a service account, edit its audience and allowed
 * subjects, deactivate or activate it, and delete it after a confirmation.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { Res } from '../api.ts';
import { t } from '../strings.ts';
import { Check, Confirm, Field, ListEnd, Messages, Select, Title, useAction, useCall, useConsole } from '../ui.tsx';

const LIMIT = 10;
type Issuer = Res<'trusted_issuer'>;
const KEY_SOURCES = ['oidc_discovery', 'static_jwks_url'] as const;
const TYPES = ['oidc', 'kubernetes_sa', 'spiffe_jwt', 'cloud_oidc'] as const;
const BLANK = {
  service_account_id: '', name: '', issuer_url: '', key_source_type: 'oidc_discovery', jwks_url: '', expected_aud: '', subject_claim: '',
  allowed_subjects: '', issuer_type: 'oidc', is_active: true,
};

export function TrustedIssuers(): JSX.Element {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const { data, error: loadError, loading } = useCall('trusted_issuers', { pagination: { page, limit: LIMIT } });
  const { data: accounts } = useCall('clients', { pagination: { page: 1, limit: 100 } });
  const { error, status, busy, run } = useAction();
  const [form, setForm] = useState(BLANK);
  const [editing, setEditing] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<Issuer | null>(null);
  const set = <K extends keyof typeof BLANK>(k: K) => (v: (typeof BLANK)[K]) => setForm({ ...form, [k]: v });
  const clients = accounts?.clients ?? [];
  const account = form.service_account_id || clients[0]?.id || '';
  const nameOf = (id: string): string => clients.find((c) => c.id === id)?.name ?? id;
  const reset = (): void => { setEditing(null); setForm(BLANK); };
  const submit = (e: Event): void => {
    e.preventDefault();
    run(async () => {
      if (editing) {
        await api.call('update_trusted_issuer', {
          id: editing, name: form.name, jwks_url: form.jwks_url || undefined, expected_aud: form.expected_aud, allowed_subjects: form.allowed_subjects, is_active: form.is_active,
        });
        reset();
        return t.issuers.updated;
      }
      await api.call('add_trusted_issuer', {
        service_account_id: account, name: form.name, issuer_url: form.issuer_url, key_source_type: form.key_source_type, jwks_url: form.jwks_url || undefined,
        expected_aud: form.expected_aud, subject_claim: form.subject_claim || undefined, allowed_subjects: form.allowed_subjects || undefined, issuer_type: form.issuer_type,
      });
      reset();
      return t.issuers.added;
    });
  };
  return (
    <main id="main" aria-busy={loading || busy ? 'true' : 'false'}>
      <Title>{t.issuers.title}</Title>
      <p class="hint">{t.issuers.intro}</p>
      <Messages error={error || loadError} status={status} />
      <section aria-labelledby="ti-form">
        <h2 id="ti-form">{editing ? t.issuers.edit : t.issuers.add}</h2>
        <form onSubmit={submit}>
          <div class="grid">
            {editing ? null : <Select id="ti-account" label={t.issuers.account} value={account} onChange={set('service_account_id')} options={clients.map((c) => [c.id, `${c.name} (${c.client_id})`] as const)} hint={t.issuers.accountHint} />}
            <Field id="ti-name" label={t.issuers.name} value={form.name} onInput={set('name')} required />
            {editing ? null : <Field id="ti-url" label={t.issuers.issuerUrl} value={form.issuer_url} onInput={set('issuer_url')} hint={t.issuers.issuerUrlHint} required />}
            {editing ? null : <Select id="ti-type" label={t.issuers.type} value={form.issuer_type} onChange={set('issuer_type')} options={TYPES.map((x) => [x, t.issuers.types[x]] as const)} />}
            {editing ? null : <Select id="ti-keys" label={t.issuers.keySource} value={form.key_source_type} onChange={set('key_source_type')} options={KEY_SOURCES.map((x) => [x, t.issuers.keySources[x]] as const)} />}
            <Field id="ti-jwks" label={t.issuers.jwksUrl} value={form.jwks_url} onInput={set('jwks_url')} hint={t.issuers.jwksHint} />
            <Field id="ti-aud" label={t.issuers.audience} value={form.expected_aud} onInput={set('expected_aud')} required />
            {editing ? null : <Field id="ti-sub-claim" label={t.issuers.subjectClaim} value={form.subject_claim} onInput={set('subject_claim')} hint={t.issuers.subjectClaimHint} />}
            <Field id="ti-subjects" label={t.issuers.allowedSubjects} value={form.allowed_subjects} onInput={set('allowed_subjects')} hint={t.issuers.allowedSubjectsHint} />
          </div>
          {editing ? <Check id="ti-active" label={t.issuers.active} checked={form.is_active} onChange={set('is_active')} /> : null}
          <div class="row">
            <button type="submit" disabled={busy}>{editing ? t.issuers.save : t.issuers.addButton}</button>
            {editing ? <button type="button" class="secondary" onClick={reset}>{t.common.cancel}</button> : null}
          </div>
        </form>
      </section>
      {confirm ? (
        <Confirm id="ti-confirm" text={t.issuers.confirmDelete(confirm.name)} yes={t.issuers.deleteYes} onNo={() => setConfirm(null)}
          onYes={() => { const id = confirm.id; setConfirm(null); run(async () => { await api.call('delete_trusted_issuer', { id }); return t.issuers.deleted; }); }} />
      ) : null}
      {data ? (
        <>
          <table>
            <caption class="visually-hidden">{t.issuers.table}</caption>
            <thead><tr><th scope="col">{t.issuers.name}</th><th scope="col">{t.issuers.issuerUrl}</th><th scope="col">{t.issuers.type}</th><th scope="col">{t.issuers.account}</th><th scope="col">{t.issuers.active}</th><th scope="col">{t.issuers.actions}</th></tr></thead>
            <tbody>
              {data.trusted_issuers.map((x) => (
                <tr key={x.id}>
                  <td>{x.name}</td>
                  <td class="wrap"><code>{x.issuer_url}</code></td>
                  <td>{x.issuer_type}</td>
                  <td>{nameOf(x.service_account_id)}</td>
                  <td>{x.is_active ? t.common.yes : t.common.no}</td>
                  <td class="actions">
                    <button type="button" class="link" aria-label={`${t.issuers.editButton} ${x.name}`} onClick={() => {
                      setEditing(x.id);
                      setForm({ ...BLANK, name: x.name, jwks_url: x.jwks_url ?? '', expected_aud: x.expected_aud, allowed_subjects: x.allowed_subjects ?? '', is_active: x.is_active });
                      document.getElementById('ti-name')?.focus();
                    }}>{t.issuers.editButton}</button>
                    <button type="button" class="link danger" aria-label={`${t.issuers.delete} ${x.name}`} onClick={() => setConfirm(x)}>{t.issuers.delete}</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <ListEnd rows={data.trusted_issuers.length} empty={t.issuers.empty} pagination={data.pagination} page={page} limit={LIMIT} noun={t.issuers.noun} onPage={setPage} />
        </>
      ) : null}
    </main>
  );
}
