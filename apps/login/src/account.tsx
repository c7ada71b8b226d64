/**
 * @module login/account
 * The account console at `/app/account` (issue 33 §2) for the signed-in user, on public `/v1` routes
 * only, with the browser's session cookie:
 * - profile: `GET /v1/profile`, `POST /v1/update_profile` (names, birthdate);
 * - email and phone: `update_profile` with `email` or `phone_number`; the server ends every session and
 *   clears the cookies (and, with verification on, mails an `update_email` link), so the page signs out
 *   with the server's message;
 * - password: `update_profile` with `old_password`, `new_password`, `confirm_new_password` (the server
 *   refuses a wrong current password with 400 `incorrect old password`, shown in the alert region);
 * - two-step verification: the enrolled methods (`enrolled_mfa_methods`), TOTP enrolment or
 *   re-enrolment (`totp_mfa_setup`, then `verify_otp` with `is_totp`), whose 10 new recovery codes
 *   replace the old set and are shown once with copy and download (RecoveryCodes); codes by email or
 *   text message (`email_otp_mfa_setup` / `sms_otp_mfa_setup`, then `verify_otp` with the code sent),
 *   offered when `/v1/meta` says the server can send them and the account has the address or number;
 * - sessions: `GET /v1/sessions` (device, IP address, sign-in and last use, this device marked),
 *   `revoke_session` for one, `revoke_other_sessions` for all but this one;
 * - passkeys: `webauthn_credentials`, `webauthn_delete_credential`, and adding one
 *   (`webauthn_registration_options` → WebAuthn create → `webauthn_registration_verify`);
 * - connected applications: `consent_grants`, `revoke_consent_grant` (the consents given at `/authorize`);
 * - deactivation: `deactivate_account`, after a confirmation checkbox.
 * Each section is a labelled region with its own form; an error is announced in the page's alert
 * region and marks only the fields of the form that failed. Strings: account-strings.ts.
 */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { browserSupportsWebAuthn, startRegistration } from '@simplewebauthn/browser';
import type { Api, AuthResponse, Meta, User } from './api.ts';
import { ACCOUNT as T, when } from './account-strings.ts';
import { Field, Form, formValues } from './form.tsx';
import { RecoveryCodes } from './recovery-codes.tsx';

/** The profile fields the console reads (proto `gatehouse.common.v1.User`). */
export interface AccountUser extends User {
  email_verified?: boolean;
  phone_number_verified?: boolean;
  family_name?: string | null;
  middle_name?: string | null;
  nickname?: string | null;
  birthdate?: string | null;
  enrolled_mfa_methods?: string[];
}

/** One passkey of `webauthn_credentials` (behaviour.md §4.3). */
interface Passkey { id: string; name: string; created_at: number; last_used_at?: number | null }

/** One consent of `consent_grants` (proto `gatehouse.authn.v1.ConsentGrant`). */
interface Consent { id: string; client_id: string; client_name: string; scopes: string[]; updated_at: number }

/** One session of `sessions` (proto `gatehouse.authn.v1.UserSession`; Unix seconds). */
interface UserSession {
  id: string; login_method: string; user_agent: string; ip_address: string; created_at: number; last_used_at: number;
  expires_at: number; is_current: boolean; client_id: string;
}

const BROWSERS: ReadonlyArray<[RegExp, string]> = [
  [/Edg(A|iOS)?\//, 'Edge'], [/OPR\//, 'Opera'], [/Firefox\/|FxiOS\//, 'Firefox'], [/Chrome\/|CriOS\/|Chromium\//, 'Chrome'], [/Safari\//, 'Safari'],
  [/^curl\//, 'curl'],
];
const SYSTEMS: ReadonlyArray<[RegExp, string]> = [
  [/iPhone|iPad|iPod/, 'iOS'], [/Android/, 'Android'], [/Windows/, 'Windows'], [/Mac OS X|Macintosh/, 'macOS'], [/CrOS/, 'ChromeOS'], [/Linux/, 'Linux'],
];

/**
 * A short name of the device a session was opened from, from its `User-Agent`: `<browser> on <system>`
 * when both are recognised, one of them, the header itself (cut to 60 characters), or `unknown` for none.
 */
export function deviceOf(userAgent: string, unknown: string): string {
  const ua = userAgent.trim();
  if (ua === '') return unknown;
  const browser = BROWSERS.find(([re]) => re.test(ua))?.[1];
  const system = SYSTEMS.find(([re]) => re.test(ua))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? (ua.length > 60 ? `${ua.slice(0, 59)}…` : ua);
}

/** The editable names of the profile form, in the order shown. */
const NAME_FIELDS: ReadonlyArray<[keyof AccountUser & string, string, string]> = [
  ['given_name', T.profile.givenName, 'given-name'], ['middle_name', T.profile.middleName, 'additional-name'],
  ['family_name', T.profile.familyName, 'family-name'], ['nickname', T.profile.nickname, 'nickname'],
];

/**
 * The `update_profile` body of the profile form: each field whose trimmed value differs from `user`
 * (an emptied field is sent as `''`), or null when nothing changed.
 */
export function profileChanges(user: AccountUser, values: Record<string, string>): Record<string, string> | null {
  const out: Record<string, string> = {};
  for (const key of [...NAME_FIELDS.map(([k]) => k), 'birthdate'] as const) {
    const next = (values[key] ?? '').trim();
    if (next !== ((user[key] as string | null | undefined) ?? '')) out[key] = next;
  }
  return Object.keys(out).length > 0 ? out : null;
}

type Mode = { name: 'overview' } | { name: 'totp'; auth: AuthResponse } | { name: 'codes'; codes: string[] }
  | { name: 'otp'; channel: 'email' | 'sms'; to: string };

interface Props {
  api: Api;
  /** `/v1/meta`: which second steps the server can send */
  meta: Meta;
  organizationName: string;
  setStatus: (s: string) => void;
  setError: (s: string) => void;
  error: string;
  /** after sign-out or deactivation: the page shows the sign-in (or a message) with this text */
  onSignedOut: (message: string, deactivated: boolean) => void;
  messageOf: (err: unknown) => string;
}

/** The console's body; the caller renders the `<h1>` and the status and alert regions. */
export function AccountConsole(p: Props): JSX.Element {
  const [user, setUser] = useState<AccountUser | null>(null);
  const [passkeys, setPasskeys] = useState<Passkey[]>([]);
  const [consents, setConsents] = useState<Consent[]>([]);
  const [sessions, setSessions] = useState<UserSession[]>([]);
  const [mode, setMode] = useState<Mode>({ name: 'overview' });
  const [busy, setBusy] = useState(false);
  /** the id of the form whose submission failed: only its fields are marked invalid */
  const [failed, setFailed] = useState('');
  const [confirmDeactivate, setConfirmDeactivate] = useState(false);

  const load = async (): Promise<void> => {
    const [u, pk, cg, ss] = await Promise.all([
      p.api.get<AccountUser>('profile'),
      p.api.post<{ webauthn_credentials?: Passkey[] }>('webauthn_credentials').catch(() => ({ webauthn_credentials: [] })),
      p.api.post<{ consent_grants?: Consent[] }>('consent_grants', {}).catch(() => ({ consent_grants: [] })),
      p.api.get<{ sessions?: UserSession[] }>('sessions').catch(() => ({ sessions: [] })),
    ]);
    setSessions(ss.sessions ?? []);
    setUser(u);
    setPasskeys(pk.webauthn_credentials ?? []);
    setConsents(cg.consent_grants ?? []);
  };
  /** Runs `action` for form `form` (or a button): busy, then the status or the error. */
  const run = (form: string, action: () => Promise<string | void>) => async (): Promise<void> => {
    setBusy(true);
    setFailed('');
    p.setError('');
    p.setStatus('');
    try {
      const message = await action();
      if (message) p.setStatus(message);
    } catch (err) {
      setFailed(form);
      p.setError(p.messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  const errorOf = (form: string): string => (failed === form ? p.error : '');
  useEffect(() => { void run('', load)(); }, []);

  if (!user) return <p aria-busy="true">{T.loading}</p>;

  if (mode.name === 'totp') {
    const a = mode.auth;
    return (
      <section aria-labelledby="totp-title">
        <h2 id="totp-title">{T.mfa.totpHeading}</h2>
        <p>{T.mfa.scan}</p>
        {a.authenticator_scanner_image && <img class="qr" width={200} height={200} alt={T.mfa.qrAlt} src={`data:image/png;base64,${a.authenticator_scanner_image}`} />}
        <p>{T.mfa.key}: <code class="secret">{a.authenticator_secret}</code></p>
        <Form id="totp-enrol" submit={T.mfa.verify} busy={busy} onSubmit={run('totp-enrol', async () => {
          await p.api.post<AuthResponse>('verify_otp', { otp: (formValues('totp-enrol').otp ?? '').trim(), is_totp: true });
          setMode({ name: 'codes', codes: a.authenticator_recovery_codes ?? [] });
          await load();
        })}>
          <Field name="otp" label={T.mfa.code} autoComplete="one-time-code" inputMode="numeric" error={errorOf('totp-enrol')} required />
        </Form>
        <button type="button" class="secondary" disabled={busy} onClick={() => { p.setError(''); setMode({ name: 'overview' }); }}>{T.mfa.cancel}</button>
      </section>
    );
  }
  if (mode.name === 'otp') {
    const channel = mode.channel;
    return (
      <section aria-labelledby="otp-title">
        <h2 id="otp-title">{T.mfa.otpHeading[channel]}</h2>
        <p>{T.mfa.otpSent[channel](mode.to)}</p>
        <Form id="otp-enrol" submit={T.mfa.verify} busy={busy} onSubmit={run('otp-enrol', async () => {
          await p.api.post<AuthResponse>('verify_otp', { otp: (formValues('otp-enrol').otp ?? '').trim() });
          setMode({ name: 'overview' });
          await load();
          return T.mfa.otpEnabled[channel];
        })}>
          <Field name="otp" label={T.mfa.otpCode} autoComplete="one-time-code" inputMode="numeric" error={errorOf('otp-enrol')} required />
        </Form>
        <button type="button" class="secondary" disabled={busy} onClick={() => { p.setError(''); setMode({ name: 'overview' }); }}>{T.mfa.cancel}</button>
      </section>
    );
  }
  if (mode.name === 'codes') {
    return (
      <section aria-labelledby="codes-title">
        <h2 id="codes-title">{T.mfa.codesHeading}</h2>
        <RecoveryCodes codes={mode.codes} organizationName={p.organizationName} busy={busy} setStatus={p.setStatus} setError={p.setError}
          onContinue={() => { setMode({ name: 'overview' }); p.setStatus(T.mfa.enabled); }} />
      </section>
    );
  }

  const methods = user.enrolled_mfa_methods ?? [];
  const who = user.email || user.phone_number || user.id;
  return (
    <>
      <p>{T.intro(who)}</p>
      <nav aria-label={T.nav} class="toc">
        <ul>
          {[['profile', T.profile.heading], ['contact', T.contact.heading], ['password', T.password.heading], ['mfa', T.mfa.heading], ['passkeys', T.passkeys.heading],
            ['sessions', T.sessions.heading], ['apps', T.apps.heading], ['deactivate', T.deactivate.heading]].map(([id, label]) => <li key={id}><a href={`#${id}`}>{label}</a></li>)}
        </ul>
      </nav>

      <section id="profile" aria-labelledby="profile-title">
        <h2 id="profile-title">{T.profile.heading}</h2>
        <dl class="facts">
          {user.email && <><dt>{T.profile.email}</dt><dd>{user.email} ({user.email_verified ? T.profile.emailVerified : T.profile.emailUnverified})</dd></>}
          {user.phone_number && <><dt>{T.profile.phone}</dt><dd>{user.phone_number} ({user.phone_number_verified ? T.profile.emailVerified : T.profile.emailUnverified})</dd></>}
        </dl>
        <Form id="profile-form" submit={T.profile.save} busy={busy} onSubmit={run('profile-form', async () => {
          const changes = profileChanges(user, formValues('profile-form'));
          if (!changes) return T.profile.nothingChanged;
          const out = await p.api.post('update_profile', changes);
          setUser(await p.api.get<AccountUser>('profile'));
          return out.message;
        })}>
          {NAME_FIELDS.map(([key, label, auto]) => (
            <Field key={key} name={key} label={label} autoComplete={auto} defaultValue={(user[key] as string | null | undefined) ?? ''} error={errorOf('profile-form')} />
          ))}
          <Field name="birthdate" label={T.profile.birthdate} type="date" autoComplete="bday" hint={T.profile.birthdateHint} defaultValue={user.birthdate ?? ''} error={errorOf('profile-form')} />
        </Form>
      </section>

      <section id="contact" aria-labelledby="contact-title">
        <h2 id="contact-title">{T.contact.heading}</h2>
        <Form id="email-form" submit={T.contact.changeEmail} busy={busy} onSubmit={run('email-form', async () => {
          const email = (formValues('email-form').new_email ?? '').trim();
          if (email.toLowerCase() === (user.email ?? '')) throw new Error(T.contact.sameValue);
          const out = await p.api.post('update_profile', { email });
          p.onSignedOut(out.message, false);
        })}>
          <Field name="new_email" label={T.contact.newEmail} type="email" autoComplete="email" hint={T.contact.emailHint} error={errorOf('email-form')} required />
        </Form>
        <Form id="phone-form" submit={T.contact.changePhone} busy={busy} onSubmit={run('phone-form', async () => {
          const phone = (formValues('phone-form').new_phone_number ?? '').trim();
          if (phone === (user.phone_number ?? '')) throw new Error(T.contact.sameValue);
          const out = await p.api.post('update_profile', { phone_number: phone });
          p.onSignedOut(out.message, false);
        })}>
          <Field name="new_phone_number" label={T.contact.newPhone} type="tel" autoComplete="tel" hint={T.contact.phoneHint} error={errorOf('phone-form')} required />
        </Form>
      </section>

      <section id="password" aria-labelledby="password-title">
        <h2 id="password-title">{T.password.heading}</h2>
        <Form id="password-form" submit={T.password.submit} busy={busy} onSubmit={run('password-form', async () => {
          const f = formValues('password-form');
          const out = await p.api.post('update_profile', { old_password: f.old_password ?? '', new_password: f.new_password ?? '', confirm_new_password: f.confirm_new_password ?? '' });
          (document.getElementById('password-form') as HTMLFormElement | null)?.reset();
          return out.message;
        })}>
          <Field name="old_password" label={T.password.current} type="password" autoComplete="current-password" error={errorOf('password-form')} required />
          <Field name="new_password" label={T.password.next} type="password" autoComplete="new-password" hint={T.password.hint} error={errorOf('password-form')} required />
          <Field name="confirm_new_password" label={T.password.confirm} type="password" autoComplete="new-password" error={errorOf('password-form')} required />
        </Form>
      </section>

      <section id="mfa" aria-labelledby="mfa-title">
        <h2 id="mfa-title">{T.mfa.heading}</h2>
        <p>{methods.length > 0 ? T.mfa.enrolled(methods.map((m) => T.mfa.methodNames[m] ?? m).join(', ')) : T.mfa.none}</p>
        {methods.includes('totp') && <p class="hint">{T.mfa.replaceHint}</p>}
        <button type="button" class="secondary" disabled={busy} onClick={run('', async () => {
          setMode({ name: 'totp', auth: await p.api.post<AuthResponse>('totp_mfa_setup', {}) });
        })}>{methods.includes('totp') ? T.mfa.replaceTotp : T.mfa.setUpTotp}</button>
        {p.meta.is_email_otp_mfa_enabled === true && user.email && !methods.includes('email_otp') && (
          <button type="button" class="secondary" disabled={busy} onClick={run('', async () => {
            await p.api.post('email_otp_mfa_setup', {});
            setMode({ name: 'otp', channel: 'email', to: user.email! });
          })}>{T.mfa.setUpEmailOtp}</button>
        )}
        {p.meta.is_sms_otp_mfa_enabled === true && user.phone_number && !methods.includes('sms_otp') && (
          <button type="button" class="secondary" disabled={busy} onClick={run('', async () => {
            await p.api.post('sms_otp_mfa_setup', {});
            setMode({ name: 'otp', channel: 'sms', to: user.phone_number! });
          })}>{T.mfa.setUpSmsOtp}</button>
        )}
      </section>

      <section id="passkeys" aria-labelledby="passkeys-title">
        <h2 id="passkeys-title">{T.passkeys.heading}</h2>
        <Items label={T.passkeys.list} none={T.passkeys.none} busy={busy} items={passkeys.map((k) => ({
          id: k.id, title: k.name, remove: T.passkeys.remove(k.name),
          detail: `${T.passkeys.created} ${when(k.created_at, T.passkeys.never)} · ${T.passkeys.lastUsed} ${when(k.last_used_at, T.passkeys.never)}`,
          onRemove: run('', async () => {
            const out = await p.api.post('webauthn_delete_credential', { id: k.id });
            await load();
            return out.message;
          }),
        }))} />
        {browserSupportsWebAuthn() ? (
          <Form id="passkey-form" submit={T.passkeys.add} busy={busy} onSubmit={run('passkey-form', async () => {
            const name = (formValues('passkey-form').passkey_name ?? '').trim();
            const { options } = await p.api.post<{ options: string }>('webauthn_registration_options', {});
            const credential = await startRegistration({ optionsJSON: JSON.parse(options) });
            const out = await p.api.post<AuthResponse>('webauthn_registration_verify', { credential: JSON.stringify(credential), ...(name ? { name } : {}) });
            (document.getElementById('passkey-form') as HTMLFormElement | null)?.reset();
            await load();
            return out.message;
          })}>
            <Field name="passkey_name" label={T.passkeys.name} hint={T.passkeys.nameHint} error={errorOf('passkey-form')} />
          </Form>
        ) : <p>{T.passkeys.unsupported}</p>}
      </section>

      <section id="sessions" aria-labelledby="sessions-title">
        <h2 id="sessions-title">{T.sessions.heading}</h2>
        <Items label={T.sessions.list} none={T.sessions.none} busy={busy} items={sessions.map((s) => {
          const device = deviceOf(s.user_agent, T.sessions.unknownDevice);
          return {
            id: s.id, title: s.is_current ? `${device} (${T.sessions.current})` : device,
            detail: [s.ip_address && `${T.sessions.ip} ${s.ip_address}`, `${T.sessions.started} ${when(s.created_at, '')}`,
              `${T.sessions.lastUsed} ${when(s.last_used_at, '')}`, s.client_id && `${T.sessions.app} ${s.client_id}`].filter(Boolean).join(' · '),
            ...(s.is_current ? {} : {
              remove: T.sessions.signOut(device),
              onRemove: run('', async () => {
                await p.api.post('revoke_session', { id: s.id });
                await load();
                return T.sessions.signedOut(device);
              }),
            }),
          };
        })} />
        {sessions.some((s) => !s.is_current) && (
          <button type="button" class="secondary" disabled={busy} onClick={run('', async () => {
            const out = await p.api.post<{ message: string; count?: number }>('revoke_other_sessions', {});
            await load();
            return T.sessions.othersSignedOut(out.count ?? 0);
          })}>{T.sessions.signOutOthers}</button>
        )}
      </section>

      <section id="apps" aria-labelledby="apps-title">
        <h2 id="apps-title">{T.apps.heading}</h2>
        <Items label={T.apps.list} none={T.apps.none} busy={busy} items={consents.map((c) => ({
          id: c.id, title: c.client_name, remove: T.apps.revoke(c.client_name),
          detail: `${T.apps.scopes}: ${c.scopes.join(', ')} · ${T.apps.allowed} ${when(c.updated_at, '')}`,
          onRemove: run('', async () => {
            await p.api.post('revoke_consent_grant', { id: c.id });
            await load();
            return T.apps.revoked(c.client_name);
          }),
        }))} />
      </section>

      <section id="deactivate" aria-labelledby="deactivate-title">
        <h2 id="deactivate-title">{T.deactivate.heading}</h2>
        <p>{T.deactivate.warning}</p>
        <div class="check">
          <input id="f-confirm-deactivate" type="checkbox" checked={confirmDeactivate} onChange={(e) => setConfirmDeactivate(e.currentTarget.checked)} />
          <label for="f-confirm-deactivate">{T.deactivate.confirm}</label>
        </div>
        <button type="button" class="danger" disabled={busy || !confirmDeactivate} onClick={run('', async () => {
          const out = await p.api.post('deactivate_account');
          p.onSignedOut(out.message, true);
        })}>{T.deactivate.submit}</button>
      </section>

      <button type="button" class="link" disabled={busy} onClick={run('', async () => {
        const out = await p.api.post('logout');
        p.onSignedOut(out.message, false);
      })}>{T.signOut}</button>
    </>
  );
}

/** One entry of a list: its title, a line of detail, and (when it can be removed) the label of its remove button. */
interface Item { id: string; title: string; detail: string; remove?: string; onRemove?: () => void }

/** A labelled list of entries (passkeys, sessions, connected applications), or `none` when empty. */
function Items(p: { label: string; none: string; busy: boolean; items: Item[] }): JSX.Element {
  if (p.items.length === 0) return <p>{p.none}</p>;
  return (
    <ul class="items" aria-label={p.label}>
      {p.items.map((i) => (
        <li key={i.id}>
          <strong>{i.title}</strong>
          <span class="hint">{i.detail}</span>
          {i.remove && <button type="button" class="secondary" disabled={p.busy} onClick={i.onRemove}>{i.remove}</button>}
        </li>
      ))}
    </ul>
  );
}
