/**
 * @module dashboard/pages/invitations
 * Invitations and verification requests: invite people by email (`invite_members`: accounts are made
 * with an unverified address and each is mailed a link, a magic link when magic-link login is on,
 * otherwise a link to set a password), and the pending verification requests (`verification_requests`:
 * sign-up, magic-link, email-change, password-reset and invitation links not used yet; their tokens
 * are never listed).
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { Res } from '../api.ts';
import { t } from '../strings.ts';
import { Area, Field, ListEnd, Messages, Title, useAction, useCall, useConsole, when } from '../ui.tsx';

const LIMIT = 10;

export function Invitations(): JSX.Element {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const { data, error: loadError, loading } = useCall('verification_requests', { page, limit: LIMIT });
  const { error, status, busy, run } = useAction();
  const [form, setForm] = useState({ emails: '', redirect_uri: '' });
  const [invited, setInvited] = useState<Res<'invite_members'>['users']>([]);
  return (
    <main id="main" aria-busy={loading || busy ? 'true' : 'false'}>
      <Title>{t.invitations.title}</Title>
      <Messages error={error || loadError} status={status} />
      <section aria-labelledby="in-form">
        <h2 id="in-form">{t.invitations.invite}</h2>
        <form onSubmit={(e) => {
          e.preventDefault();
          run(async () => {
            const r = await api.call('invite_members', { emails: form.emails.split(/[\s,;]+/).map((x) => x.trim()).filter(Boolean), redirect_uri: form.redirect_uri || undefined });
            setInvited(r.users);
            setForm({ emails: '', redirect_uri: '' });
            return r.message;
          });
        }}>
          <Area id="in-emails" label={t.invitations.emails} value={form.emails} onInput={(v) => setForm({ ...form, emails: v })} hint={t.invitations.emailsHint} rows={4} required />
          <Field id="in-redirect" label={t.invitations.redirect} value={form.redirect_uri} onInput={(v) => setForm({ ...form, redirect_uri: v })} hint={t.invitations.redirectHint} />
          <button type="submit" disabled={busy}>{t.invitations.send}</button>
        </form>
        {invited.length ? (
          <ul aria-label={t.invitations.invitedList} data-testid="invited">{invited.map((u) => <li key={u.id}>{u.email}</li>)}</ul>
        ) : null}
      </section>
      <section aria-labelledby="vr-title">
        <h2 id="vr-title">{t.invitations.requests}</h2>
        <p class="hint">{t.invitations.requestsHint}</p>
        {data ? (
          <>
            <table>
              <caption class="visually-hidden">{t.invitations.requests}</caption>
              <thead><tr><th scope="col">{t.invitations.email}</th><th scope="col">{t.invitations.kind}</th><th scope="col">{t.invitations.created}</th><th scope="col">{t.invitations.expires}</th><th scope="col">{t.invitations.redirect}</th></tr></thead>
              <tbody>
                {data.verification_requests.map((v) => (
                  <tr key={v.id}>
                    <td>{v.email ?? t.common.none}</td>
                    <td><code>{v.identifier ?? ''}</code></td>
                    <td>{when(v.created_at)}</td>
                    <td>{when(v.expires)}</td>
                    <td class="wrap">{v.redirect_uri || t.common.none}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <ListEnd rows={data.verification_requests.length} empty={t.invitations.empty} pagination={data.pagination} page={page} limit={LIMIT} noun={t.invitations.noun} onPage={setPage} />
          </>
        ) : null}
      </section>
    </main>
  );
}
