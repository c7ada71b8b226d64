/**
 * @module dashboard/pages/users
 * Users: search and page through them (`POST /v1/admin/users`), and one user's page
 * (`/v1/admin/user`): edit names, roles, verified flags, the MFA switch and an MFA reset
 * (`update_user`), sign the user out everywhere without revoking access (`revoke_user_sessions`),
 * revoke or enable access (`revoke_access`, `enable_access`), and delete after a confirmation
 * (`delete_user`). A refusal of the server is shown as its message.
 */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Res } from '../api.ts';
import { t } from '../strings.ts';
import { Check, Confirm, Field, flash, Messages, ListEnd, Title, useAction, useCall, useConsole, when } from '../ui.tsx';

const LIMIT = 10;
type User = Res<'user'>;

const nameOf = (u: User): string => [u.given_name, u.family_name].filter(Boolean).join(' ');
const who = (u: User): string => u.email || u.phone_number || u.id;

/** The list, with the search box and the pager; `?q=` and `?page=` are kept in the address. */
export function Users(): JSX.Element {
  const { href, navigate } = useConsole();
  const params = new URLSearchParams(location.search);
  const [query, setQuery] = useState(params.get('q') ?? '');
  const [applied, setApplied] = useState(params.get('q') ?? '');
  const [page, setPage] = useState(Math.max(1, Number(params.get('page')) || 1));
  const { data, error, loading } = useCall('users', { query: applied || null, pagination: { page, limit: LIMIT } });
  useEffect(() => {
    const q = new URLSearchParams();
    if (applied) q.set('q', applied);
    if (page > 1) q.set('page', String(page));
    history.replaceState(history.state, '', `${href('/users')}${q.size ? `?${q}` : ''}`);
  }, [applied, page]);
  return (
    <main id="main" aria-busy={loading ? 'true' : 'false'}>
      <Title>{t.users.title}</Title>
      <Messages error={error} status={flash()} />
      <form class="inline" role="search" onSubmit={(e) => { e.preventDefault(); setPage(1); setApplied(query.trim()); }}>
        <Field id="user-search" label={t.users.search} value={query} onInput={setQuery} hint={t.users.searchHint} type="search" />
        <button type="submit">{t.users.searchButton}</button>
      </form>
      {data ? (
        <>
          <table>
            <caption class="visually-hidden">{t.users.table}</caption>
            <thead><tr><th scope="col">{t.users.email}</th><th scope="col">{t.users.name}</th><th scope="col">{t.users.roles}</th><th scope="col">{t.users.status}</th><th scope="col">{t.users.created}</th></tr></thead>
            <tbody>
              {data.users.map((u) => (
                <tr key={u.id}>
                  <td><a href={href(`/users/${encodeURIComponent(u.id)}`)} onClick={(e) => { e.preventDefault(); navigate(`/users/${encodeURIComponent(u.id)}`); }}>{who(u)}</a></td>
                  <td>{nameOf(u) || t.common.none}</td>
                  <td>{u.roles.join(', ')}</td>
                  <td>{u.revoked_timestamp ? t.users.revoked : t.users.active}</td>
                  <td>{when(u.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <ListEnd rows={data.users.length} empty={t.users.empty} pagination={data.pagination} page={page} limit={LIMIT} noun={t.users.noun} onPage={setPage} />
        </>
      ) : null}
    </main>
  );
}

/** One user: details, the edit form, access, and delete with a confirmation. */
export function UserDetail({ id }: { id: string }): JSX.Element {
  const { api, href, navigate } = useConsole();
  const { data: user, error: loadError, loading } = useCall('user', { id });
  const { error, status, busy, run } = useAction();
  const [form, setForm] = useState({ given_name: '', family_name: '', roles: '', email_verified: false, phone_number_verified: false, mfa: false, reset_mfa: false });
  const [confirming, setConfirming] = useState(false);
  useEffect(() => {
    if (user) {
      setForm({
        given_name: user.given_name ?? '', family_name: user.family_name ?? '', roles: user.roles.join(', '),
        email_verified: user.email_verified, phone_number_verified: user.phone_number_verified, mfa: user.is_multi_factor_auth_enabled === true, reset_mfa: false,
      });
    }
  }, [user]);

  const save = (e: Event): void => {
    e.preventDefault();
    run(async () => {
      await api.call('update_user', {
        id, given_name: form.given_name, family_name: form.family_name,
        roles: form.roles.split(',').map((r) => r.trim()).filter(Boolean),
        email_verified: form.email_verified, phone_number_verified: form.phone_number_verified,
        is_multi_factor_auth_enabled: form.mfa, reset_mfa: form.reset_mfa,
      });
      return t.common.saved;
    });
  };
  const remove = (): void => {
    if (!user) return;
    run(async () => {
      try {
        await api.call('delete_user', { id });
      } catch (err) {
        setConfirming(false);
        throw err;
      }
      navigate('/users', t.users.deleted(who(user)));
      return '';
    });
  };
  const set = <K extends keyof typeof form>(k: K) => (v: (typeof form)[K]) => setForm({ ...form, [k]: v });

  return (
    <main id="main" aria-busy={loading || busy ? 'true' : 'false'}>
      <p><a href={href('/users')} onClick={(e) => { e.preventDefault(); navigate('/users'); }}>{t.users.back}</a></p>
      <Title>{user ? who(user) : t.users.title}</Title>
      <Messages error={error || loadError} status={status} />
      {user ? (
        <>
          <section aria-labelledby="details">
            <h2 id="details">{t.users.details}</h2>
            <dl class="facts">
              <dt>{t.users.id}</dt><dd><code>{user.id}</code></dd>
              <dt>{t.users.created}</dt><dd>{when(user.created_at)}</dd>
              <dt>{t.users.signupMethods}</dt><dd>{user.signup_methods || t.common.none}</dd>
              <dt>{t.users.mfaMethods}</dt><dd>{user.enrolled_mfa_methods.join(', ') || t.common.none}</dd>
            </dl>
          </section>
          <section aria-labelledby="edit">
            <h2 id="edit">{t.users.edit}</h2>
            <form onSubmit={save}>
              <Field id="given-name" label={t.users.givenName} value={form.given_name} onInput={set('given_name')} />
              <Field id="family-name" label={t.users.familyName} value={form.family_name} onInput={set('family_name')} />
              <Field id="roles" label={t.users.rolesField} value={form.roles} onInput={set('roles')} />
              <Check id="email-verified" label={t.users.emailVerified} checked={form.email_verified} onChange={set('email_verified')} />
              <Check id="phone-verified" label={t.users.phoneVerified} checked={form.phone_number_verified} onChange={set('phone_number_verified')} />
              <Check id="mfa" label={t.users.mfaEnabled} checked={form.mfa} onChange={set('mfa')} />
              <Check id="reset-mfa" label={t.users.resetMfa} checked={form.reset_mfa} onChange={set('reset_mfa')} />
              <button type="submit" disabled={busy}>{t.common.save}</button>
            </form>
          </section>
          <section aria-labelledby="access">
            <h2 id="access">{t.users.access}</h2>
            {user.revoked_timestamp ? (
              <>
                <p>{t.users.revokedAt(when(user.revoked_timestamp))}</p>
                <button type="button" disabled={busy} onClick={() => run(async () => { await api.call('enable_access', { user_id: id }); return t.users.accessEnabled; })}>{t.users.enable}</button>
              </>
            ) : (
              <>
                <button type="button" class="secondary" disabled={busy} onClick={() => run(async () => t.users.signedOut((await api.call('revoke_user_sessions', { user_id: id })).count))}>{t.users.signOut}</button>
                {' '}
                <button type="button" class="secondary" disabled={busy} onClick={() => run(async () => { await api.call('revoke_access', { user_id: id }); return t.users.accessRevoked; })}>{t.users.revoke}</button>
              </>
            )}
          </section>
          <section aria-labelledby="danger">
            <h2 id="danger">{t.users.danger}</h2>
            {confirming ? (
              <Confirm id="confirm" title={t.users.confirmTitle} text={t.users.confirmText(who(user))} yes={t.users.confirmDelete} busy={busy}
                onYes={remove} onNo={() => setConfirming(false)} />
            ) : (
              <button type="button" class="danger" onClick={() => setConfirming(true)}>{t.users.delete}</button>
            )}
          </section>
        </>
      ) : null}
    </main>
  );
}
