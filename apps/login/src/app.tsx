/**
 * @module login/app
 * The hosted login page (issue 18 item 5): sign up, log in (email or phone), forgot and reset
 * password, magic link, passkey login, the MFA screens of behaviour.md §4 (email/SMS OTP, TOTP
 * verification and enrolment, recovery code, the passkey offers, skip), social buttons for the
 * providers `/v1/meta` reports, and a signed-in screen. Each screen is one form driving public `/v1`
 * routes; which MFA screen follows is read from the AuthResponse `should_*` fields (§4.1).
 *
 * After a completed sign-in the page goes to `return_to` when it is a same-origin `/authorize` path
 * (the `/authorize` contract, see return-to.ts) or `/app/device`, else shows the signed-in screen.
 *
 * `/app/device` (RFC 8628 §3.3, issue 34 §5) connects a device: a signed-out visitor is sent to sign in
 * first (and back), then enters the code the device shows (prefilled from `?user_code=`, to compare),
 * sees which application asks for what, and allows or denies it. With `prompt=login`
 * next to `return_to` (authn asks for a new sign-in) the form is shown even when a session exists.
 *
 * Accessibility: every input has a label, the heading of a new screen takes the focus, errors are in
 * a `role="alert"` region and statuses in `role="status"` (announced by screen readers), and the
 * input an error is about carries `aria-invalid` and `aria-describedby`.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { browserSupportsWebAuthn, startAuthentication, startRegistration } from '@simplewebauthn/browser';
import { ApiError, type Api, type AuthResponse, type DeviceConsent, type Meta, type User } from './api.ts';
import type { PageConfig } from './config.ts';
import { safeReturnTo } from './return-to.ts';
import { DevOutbox } from './dev-outbox.tsx';
import { RecoveryCodes } from './recovery-codes.tsx';
import { Field, Form, formValues } from './form.tsx';
import { AccountConsole } from './account.tsx';
import { ACCOUNT } from './account-strings.ts';

/** The screens. Those with a path are addressable (`/app/<path>`); the MFA screens follow a response. */
export type Screen =
  | { name: 'loading' }
  | { name: 'login' }
  | { name: 'signup' }
  | { name: 'forgot' }
  | { name: 'reset'; token: string }
  | { name: 'magic' }
  | { name: 'phone-reset'; phone: string }
  | { name: 'otp'; channel: 'email' | 'sms'; passkey: boolean }
  | { name: 'totp'; passkey: boolean }
  | { name: 'passkey-verify' }
  | { name: 'offer'; auth: AuthResponse }
  | { name: 'recovery-codes'; codes: string[]; auth: AuthResponse }
  | { name: 'dev-outbox' }
  /** issue 33 §2: the account console of the signed-in user */
  | { name: 'account' }
  | { name: 'message'; title: string; text: string }
  | { name: 'error'; code: string; text: string }
  | { name: 'signed-in'; user: User }
  /** RFC 8628 (issue 34 §5): `/app/device`, the user code entry (prefilled from `?user_code=`), then its consent screen */
  | { name: 'device'; userCode: string }
  | { name: 'device-consent'; consent: DeviceConsent };

const PATHS: Partial<Record<Screen['name'], string>> = {
  login: '/login', signup: '/signup', forgot: '/forgot-password', reset: '/reset-password', magic: '/magic-link',
  'dev-outbox': '/dev-outbox', account: '/account',
};

/** The social providers of Meta's `is_<provider>_login_enabled` (behaviour.md §5.2), with their labels. */
const PROVIDERS: ReadonlyArray<[string, string]> = [
  ['google', 'Google'], ['facebook', 'Facebook'], ['github', 'GitHub'], ['linkedin', 'LinkedIn'], ['apple', 'Apple'],
  ['discord', 'Discord'], ['twitter', 'X (Twitter)'], ['microsoft', 'Microsoft'], ['twitch', 'Twitch'], ['roblox', 'Roblox'],
];

const PHONE = /^\+?[0-9]{10,15}$/;

/** `{phone_number}` when `id` (spaces, dashes and brackets removed) is a phone number (§3.1), else `{email}`. */
export function identifierBody(id: string): { email: string } | { phone_number: string } {
  const compact = id.trim().replace(/[\s()-]/g, '');
  return PHONE.test(compact) && !id.includes('@') ? { phone_number: compact } : { email: id.trim() };
}

/** The MFA screen (or sign-in) an AuthResponse calls for (behaviour.md §4.1 G2–G7). */
export function nextScreen(auth: AuthResponse): Screen | 'signed-in' | null {
  if (auth.access_token) return 'signed-in';
  if (auth.should_show_email_otp_screen) return { name: 'otp', channel: 'email', passkey: !!auth.should_offer_webauthn_mfa_verify };
  if (auth.should_show_mobile_otp_screen) return { name: 'otp', channel: 'sms', passkey: !!auth.should_offer_webauthn_mfa_verify };
  if (auth.authenticator_secret || auth.should_offer_webauthn_mfa_setup || auth.should_offer_email_otp_mfa_setup || auth.should_offer_sms_otp_mfa_setup) {
    return { name: 'offer', auth };
  }
  if (auth.should_show_totp_screen) return { name: 'totp', passkey: !!auth.should_offer_webauthn_mfa_verify };
  if (auth.should_offer_webauthn_mfa_verify) return { name: 'passkey-verify' };
  return null;
}

/** The screen for the `mfa_required=1&mfa_gate&mfa_methods` redirect of `GET /verify_email` (behaviour.md §3.4). */
function screenOfGateRedirect(q: URLSearchParams): Screen {
  const methods = new Set((q.get('mfa_methods') ?? '').split(',').filter(Boolean));
  if (q.get('mfa_gate') === 'offer') {
    return {
      name: 'offer',
      auth: {
        message: 'Proceed to mfa setup', should_offer_webauthn_mfa_setup: methods.has('webauthn'),
        should_offer_email_otp_mfa_setup: methods.has('email_otp'), should_offer_sms_otp_mfa_setup: methods.has('sms_otp'),
      },
    };
  }
  if (methods.has('totp')) return { name: 'totp', passkey: methods.has('webauthn') };
  if (methods.has('email_otp')) return { name: 'otp', channel: 'email', passkey: methods.has('webauthn') };
  if (methods.has('sms_otp')) return { name: 'otp', channel: 'sms', passkey: methods.has('webauthn') };
  return { name: 'passkey-verify' };
}

/** A message for anything thrown by an API call or a WebAuthn ceremony. */
function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error && err.name === 'NotAllowedError') return 'The passkey request was cancelled or timed out.';
  return err instanceof Error ? err.message : String(err);
}

interface Props {
  api: Api;
  config: PageConfig;
}

/** The whole page. */
export function App({ api, config }: Props): JSX.Element {
  const appBase = `${config.basePath}/app`;
  const initial = new URLSearchParams(location.search);
  const returnTo = safeReturnTo(initial.get('return_to'), location.origin, config.basePath);
  const [screen, setScreen] = useState<Screen>({ name: 'loading' });
  const [meta, setMeta] = useState<Meta>({});
  const [error, setError] = useState('');
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  /** the email of the current sign-in, for passkey-as-MFA (`webauthn_login_options` with `email`) */
  const emailRef = useRef<string | undefined>(undefined);
  const headingRef = useRef<HTMLHeadingElement>(null);

  const suffix = returnTo ? `?${new URLSearchParams({ return_to: returnTo }).toString()}` : '';
  const go = (next: Screen, opts: { push?: boolean; status?: string } = {}): void => {
    setError('');
    setStatus(opts.status ?? '');
    const p = PATHS[next.name];
    if (p && next.name !== 'reset') {
      const url = `${appBase}${p}${suffix}`;
      if (opts.push === false) history.replaceState(null, '', url);
      else if (`${location.pathname}${location.search}` !== url) history.pushState(null, '', url);
    }
    setScreen(next);
  };

  /** The end of every successful sign-in: back to `/authorize`, else the signed-in screen. */
  const signedIn = async (): Promise<void> => {
    if (returnTo) {
      location.assign(returnTo);
      return;
    }
    const user = await api.get<User>('profile');
    go({ name: 'signed-in', user }, { push: false });
  };

  /** Follows an AuthResponse: signed in, an MFA screen, or its message. */
  const follow = async (auth: AuthResponse): Promise<void> => {
    const next = nextScreen(auth);
    if (next === 'signed-in') return signedIn();
    // the server's text is shown where it says what happened (a code was sent); the MFA screens say the rest
    if (next) return go(next, { status: next.name === 'otp' ? auth.message : '' });
    go({ name: 'message', title: 'Check your inbox', text: auth.message });
  };

  /** Runs one action with the busy flag and the error region. */
  const run = (action: () => Promise<void>) => async (): Promise<void> => {
    setBusy(true);
    setError('');
    setStatus('');
    try {
      await action();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  useEffect(() => {
    const start = async (): Promise<void> => {
      setMeta(await api.get<Meta>('meta').catch(() => ({})));
      const path = location.pathname.startsWith(appBase) ? location.pathname.slice(appBase.length) : '';
      const q = new URLSearchParams(location.search);
      // issue 31 §1: a refused SSO step (org OIDC/SAML login, callback, ACS) lands here with its code and message
      if (path === '/error') {
        const text = (q.get('message') ?? '').slice(0, 500) || 'The sign-in could not be completed.';
        go({ name: 'error', code: (q.get('code') ?? '').slice(0, 64) || 'unknown', text }, { push: false });
        // the message in the page's alert region (announced by screen readers)
        setError(text);
        return;
      }
      if (q.get('error')) {
        go({ name: 'login' }, { push: false });
        setError(q.get('error_description') || q.get('error') || 'The link could not be used.');
        return;
      }
      if (q.get('mfa_required') === '1') {
        history.replaceState(null, '', `${appBase}/login${suffix}`);
        go(screenOfGateRedirect(q));
        return;
      }
      if (path === '/reset-password') {
        const token = q.get('token') ?? '';
        // the token leaves the address bar (and any later Referer)
        history.replaceState(null, '', `${appBase}/reset-password`);
        go({ name: 'reset', token });
        return;
      }
      // issue 33 §4: the development outbox is the super-admin's page, with or without a user session
      if (path === PATHS['dev-outbox']) {
        go({ name: 'dev-outbox' }, { push: false });
        return;
      }
      // issue 33 §2: the account console needs a session; without one, sign in first and come back
      if (path === PATHS.account) {
        const user = await api.get<User>('profile').catch(() => null);
        if (user) go({ name: 'account' }, { push: false });
        else location.replace(`${appBase}/login?${new URLSearchParams({ return_to: `${appBase}/account` }).toString()}`);
        return;
      }
      if (path === '/device') {
        const user = await api.get<User>('profile').catch(() => null);
        if (!user) {
          location.replace(deviceLoginUrl(q.get('user_code') ?? ''));
          return;
        }
        go({ name: 'device', userCode: q.get('user_code') ?? '' }, { push: false });
        return;
      }
      // tokens in the query (a magic link's redirect): the cookie is set already, drop them from the URL
      if (q.has('access_token') || q.has('id_token')) history.replaceState(null, '', `${appBase}/login${suffix}`);
      let user: User | null = null;
      // `/authorize` asks for a new sign-in (OIDC Core §3.1.2.1 prompt=login, max_age): the form even with a session
      const reauthenticate = q.get('prompt') === 'login' && returnTo !== null;
      try {
        user = reauthenticate ? null : await api.get<User>('profile');
      } catch {
        user = null;
      }
      if (user) {
        if (q.has('access_token') && returnTo) return signedIn();
        go({ name: 'signed-in', user }, { push: false });
        return;
      }
      const name = (Object.keys(PATHS) as Array<Screen['name']>).find((k) => PATHS[k] === path && k !== 'reset');
      go(name ? ({ name } as Screen) : { name: 'login' }, { push: false });
    };
    void start();
    const onPop = (): void => {
      const path = location.pathname.slice(appBase.length);
      const name = (Object.keys(PATHS) as Array<Screen['name']>).find((k) => PATHS[k] === path && k !== 'reset');
      setError('');
      setStatus('');
      setScreen(name ? ({ name } as Screen) : { name: 'login' });
    };
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);

  // a new screen: its heading takes the focus (announced), unless it is the first one
  const first = useRef(true);
  useEffect(() => {
    if (screen.name === 'loading') return;
    if (first.current) {
      first.current = false;
      return;
    }
    headingRef.current?.focus();
  }, [screen]);

  const passkeyLogin = run(async () => {
    const { options } = await api.post<{ options: string }>('webauthn_login_options', emailRef.current ? { email: emailRef.current } : {});
    const credential = await startAuthentication({ optionsJSON: JSON.parse(options) });
    await follow(await api.post<AuthResponse>('webauthn_login_verify', { credential: JSON.stringify(credential) }));
  });
  const passkeys = browserSupportsWebAuthn() && meta.is_webauthn_enabled !== false;

  /** The sign-in page that comes back to `/app/device` (with the code typed or received so far). */
  const deviceLoginUrl = (userCode: string): string => {
    const back = `${appBase}/device${userCode ? `?${new URLSearchParams({ user_code: userCode }).toString()}` : ''}`;
    return `${appBase}/login?${new URLSearchParams({ return_to: back }).toString()}`;
  };

  /** Runs a device verification call; a lost sign-in goes to the sign-in page and back. */
  const deviceCall = async <T,>(body: Record<string, string>, userCode: string): Promise<T | null> => {
    try {
      return await api.oauth<T>('device_verification', body);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        location.assign(deviceLoginUrl(userCode));
        return null;
      }
      throw err;
    }
  };

  const link = (to: Screen, label: string): JSX.Element => (
    <a href={`${appBase}${PATHS[to.name] ?? ''}${suffix}`} onClick={(e) => { e.preventDefault(); go(to); }}>{label}</a>
  );

  const view = (): { title: string; body: ComponentChildren } => {
    switch (screen.name) {
      case 'loading':
        return { title: 'Loading…', body: null };
      case 'login':
        return {
          title: `Sign in to ${config.organizationName}`,
          body: (
            <>
              <Form submit="Sign in" busy={busy} onSubmit={run(async () => {
                const f = formValues('login');
                const id = identifierBody(f.identifier ?? '');
                emailRef.current = 'email' in id ? id.email : undefined;
                await follow(await api.post<AuthResponse>('login', { ...id, password: f.password ?? '' }));
              })} id="login">
                <Field name="identifier" label="Email or phone number" autoComplete="username webauthn" error={error} required />
                <Field name="password" label="Password" type="password" autoComplete="current-password" error={error} required />
              </Form>
              <p class="links">{link({ name: 'forgot' }, 'Forgot your password?')}</p>
              {passkeys && <button type="button" class="secondary" disabled={busy} onClick={passkeyLogin}>Sign in with a passkey</button>}
              {meta.is_magic_link_login_enabled === true && <p class="links">{link({ name: 'magic' }, 'Email me a sign-in link')}</p>}
              <Social meta={meta} basePath={config.basePath} returnUrl={`${location.origin}${appBase}/login${suffix}`} />
              {meta.is_sign_up_enabled !== false && <p class="links">No account yet? {link({ name: 'signup' }, 'Create an account')}</p>}
            </>
          ),
        };
      case 'signup':
        return {
          title: 'Create your account',
          body: (
            <>
              <Form submit="Create account" busy={busy} id="signup" onSubmit={run(async () => {
                const f = formValues('signup');
                const id = identifierBody(f.identifier ?? '');
                emailRef.current = 'email' in id ? id.email : undefined;
                await follow(await api.post<AuthResponse>('signup', {
                  ...id, password: f.password ?? '', confirm_password: f.confirm_password ?? '',
                  ...(f.given_name ? { given_name: f.given_name } : {}),
                }));
              })}>
                <Field name="given_name" label="Name (optional)" autoComplete="given-name" />
                <Field name="identifier" label="Email or phone number" autoComplete="username" error={error} required />
                <Field name="password" label="Password" type="password" autoComplete="new-password" error={error} required
                  hint={meta.is_strong_password_enabled === false ? 'At least 8 characters.' : 'At least 8 characters, with an uppercase letter, a lowercase letter, a number and a special character.'} />
                <Field name="confirm_password" label="Confirm password" type="password" autoComplete="new-password" error={error} required />
              </Form>
              <p class="links">Already have an account? {link({ name: 'login' }, 'Sign in')}</p>
            </>
          ),
        };
      case 'forgot':
        return {
          title: 'Reset your password',
          body: (
            <>
              <Form submit="Send reset instructions" busy={busy} id="forgot" onSubmit={run(async () => {
                const id = identifierBody(formValues('forgot').identifier ?? '');
                const out = await api.post('forgot_password', id);
                if ('phone_number' in id) go({ name: 'phone-reset', phone: id.phone_number }, { status: out.message });
                else go({ name: 'message', title: 'Check your inbox', text: out.message });
              })}>
                <Field name="identifier" label="Email or phone number" autoComplete="username" error={error} required />
              </Form>
              <p class="links">{link({ name: 'login' }, 'Back to sign in')}</p>
            </>
          ),
        };
      case 'reset':
      case 'phone-reset': {
        const token = screen.name === 'reset' ? screen.token : '';
        const phone = screen.name === 'phone-reset' ? screen.phone : '';
        return {
          title: 'Choose a new password',
          body: (
            <>
              {screen.name === 'reset' && !token && <p role="note">This page needs the link from your password reset email.</p>}
              <Form submit="Set new password" busy={busy} id="reset" onSubmit={run(async () => {
                const f = formValues('reset');
                const leg = token ? { token } : { otp: f.otp ?? '', phone_number: phone };
                const out = await api.post('reset_password', { ...leg, password: f.password ?? '', confirm_password: f.confirm_password ?? '' });
                go({ name: 'login' }, { status: `${out.message} You can now sign in.` });
              })}>
                {phone && <Field name="otp" label="Code from the text message" autoComplete="one-time-code" error={error} required />}
                <Field name="password" label="New password" type="password" autoComplete="new-password" error={error} required />
                <Field name="confirm_password" label="Confirm new password" type="password" autoComplete="new-password" error={error} required />
              </Form>
              <p class="links">{link({ name: 'login' }, 'Back to sign in')}</p>
            </>
          ),
        };
      }
      case 'magic':
        return {
          title: 'Sign in with an email link',
          body: (
            <>
              <Form submit="Email me a link" busy={busy} id="magic" onSubmit={run(async () => {
                const email = (formValues('magic').email ?? '').trim();
                const out = await api.post('magic_link_login', { email, redirect_uri: `${location.origin}${appBase}/login${suffix}` });
                go({ name: 'message', title: 'Check your inbox', text: out.message });
              })}>
                <Field name="email" label="Email" type="email" autoComplete="email" error={error} required />
              </Form>
              <p class="links">{link({ name: 'login' }, 'Sign in with a password instead')}</p>
            </>
          ),
        };
      case 'otp':
        return {
          title: screen.channel === 'email' ? 'Check your email' : 'Check your phone',
          body: (
            <>
              <p>Enter the one-time code we sent to your {screen.channel === 'email' ? 'email address' : 'phone'}.</p>
              <Form submit="Verify" busy={busy} id="otp" onSubmit={run(async () => {
                await follow(await api.post<AuthResponse>('verify_otp', { otp: (formValues('otp').otp ?? '').trim() }));
              })}>
                <Field name="otp" label="One-time code" autoComplete="one-time-code" error={error} required />
              </Form>
              <button type="button" class="secondary" disabled={busy} onClick={run(async () => setStatus((await api.post('resend_otp')).message))}>Send a new code</button>
              {screen.passkey && passkeys && <button type="button" class="secondary" disabled={busy} onClick={passkeyLogin}>Use a passkey instead</button>}
            </>
          ),
        };
      case 'totp':
        return {
          title: 'Two-step verification',
          body: <TotpVerify busy={busy} error={error} passkey={screen.passkey && passkeys} onPasskey={passkeyLogin}
            onSubmit={(otp) => run(async () => follow(await api.post<AuthResponse>('verify_otp', { otp, is_totp: true })))()} />,
        };
      case 'passkey-verify':
        return {
          title: 'Two-step verification',
          body: (
            <>
              <p>Confirm it is you with your passkey.</p>
              <button type="button" disabled={busy} onClick={passkeyLogin}>Use my passkey</button>
            </>
          ),
        };
      case 'offer': {
        const a = screen.auth;
        const enforced = meta.is_mfa_enforced === true;
        return {
          title: 'Set up two-step verification',
          body: (
            <>
              <p>{enforced ? 'Your organization requires a second step when you sign in. Choose one:' : 'Protect your account with a second step when you sign in.'}</p>
              {a.authenticator_secret && (
                <section aria-labelledby="totp-title">
                  <h2 id="totp-title">Authenticator app</h2>
                  <p>Scan this QR code with your authenticator app, or enter the key by hand, then type the 6-digit code it shows.</p>
                  {a.authenticator_scanner_image && <img class="qr" width={200} height={200} alt="QR code to add this account to an authenticator app" src={`data:image/png;base64,${a.authenticator_scanner_image}`} />}
                  <p>Key: <code class="secret">{a.authenticator_secret}</code></p>
                  {a.authenticator_recovery_codes && a.authenticator_recovery_codes.length > 0 && (
                    <p>After the code is accepted you get {a.authenticator_recovery_codes.length} recovery codes to save.</p>
                  )}
                  <Form submit="Verify and turn on" busy={busy} id="totp-enrol" onSubmit={run(async () => {
                    const out = await api.post<AuthResponse>('verify_otp', { otp: (formValues('totp-enrol').otp ?? '').trim(), is_totp: true });
                    // issue 33 §3: the codes become usable with this verification; show them in full before going on
                    const codes = a.authenticator_recovery_codes ?? [];
                    if (codes.length > 0) go({ name: 'recovery-codes', codes, auth: out });
                    else await follow(out);
                  })}>
                    <Field name="otp" label="Code from the app" autoComplete="one-time-code" inputMode="numeric" error={error} required />
                  </Form>
                </section>
              )}
              {(a.should_offer_webauthn_mfa_setup && passkeys) || a.should_offer_email_otp_mfa_setup || a.should_offer_sms_otp_mfa_setup ? (
                <section aria-labelledby="other-title">
                  <h2 id="other-title">{a.authenticator_secret ? 'Or use' : 'Choose a method'}</h2>
                  {a.should_offer_webauthn_mfa_setup && passkeys && (
                    <button type="button" class="secondary" disabled={busy} onClick={run(async () => {
                      const { options } = await api.post<{ options: string }>('webauthn_registration_options', emailRef.current ? { email: emailRef.current } : {});
                      const credential = await startRegistration({ optionsJSON: JSON.parse(options) });
                      await follow(await api.post<AuthResponse>('webauthn_registration_verify', { credential: JSON.stringify(credential) }));
                    })}>A passkey on this device</button>
                  )}
                  {a.should_offer_email_otp_mfa_setup && (
                    <button type="button" class="secondary" disabled={busy} onClick={run(async () => {
                      const out = await api.post('email_otp_mfa_setup');
                      go({ name: 'otp', channel: 'email', passkey: false }, { status: out.message });
                    })}>Codes by email</button>
                  )}
                  {a.should_offer_sms_otp_mfa_setup && (
                    <button type="button" class="secondary" disabled={busy} onClick={run(async () => {
                      const out = await api.post('sms_otp_mfa_setup');
                      go({ name: 'otp', channel: 'sms', passkey: false }, { status: out.message });
                    })}>Codes by text message</button>
                  )}
                </section>
              ) : null}
              {!enforced && <button type="button" class="link" disabled={busy} onClick={run(async () => follow(await api.post<AuthResponse>('skip_mfa_setup')))}>Skip for now</button>}
            </>
          ),
        };
      }
      case 'recovery-codes': {
        const next = screen.auth;
        return {
          title: 'Save your recovery codes',
          body: <RecoveryCodes codes={screen.codes} organizationName={config.organizationName} busy={busy} setStatus={setStatus} setError={setError}
            onContinue={run(async () => follow(next))} />,
        };
      }
      case 'device':
        return {
          title: 'Connect a device',
          body: (
            <>
              <p>Enter the code shown on your device. Only enter a code from a device you are setting up yourself.</p>
              <Form submit="Continue" busy={busy} id="device" onSubmit={run(async () => {
                const userCode = (formValues('device').user_code ?? '').trim();
                const consent = await deviceCall<DeviceConsent>({ user_code: userCode }, userCode);
                if (consent) go({ name: 'device-consent', consent });
              })}>
                <Field name="user_code" label="Code" autoComplete="one-time-code" defaultValue={screen.userCode} error={error} required
                  hint="8 letters, for example WDJB-MJHT. Upper or lower case, with or without the dash." />
              </Form>
            </>
          ),
        };
      case 'device-consent': {
        const c = screen.consent;
        const answer = (decision: 'allow' | 'deny') => run(async () => {
          const out = await deviceCall<{ status: string; client_name: string }>({ consent_ticket: c.consent_ticket, decision }, c.user_code);
          if (!out) return;
          if (out.status === 'approved') go({ name: 'message', title: 'Device connected', text: `${c.client_name} can now access your account. You can return to your device.` });
          else go({ name: 'message', title: 'Access denied', text: `${c.client_name} was not given access to your account. You can close this page.` });
        });
        return {
          title: `${c.client_name} wants to access your account`,
          body: (
            <>
              <p>Check that your device shows the code <strong class="secret">{c.user_code}</strong>. If you allow it, the application will be able to:</p>
              <ul class="scopes">{c.scopes.map((s) => <li key={s.scope}>{s.words} <small>({s.scope})</small></li>)}</ul>
              <button type="button" disabled={busy} onClick={answer('allow')}>Allow</button>
              <button type="button" class="secondary" disabled={busy} onClick={answer('deny')}>Deny</button>
              <p><small>You can withdraw this consent later from your account.</small></p>
            </>
          ),
        };
      }
      case 'account':
        return {
          title: ACCOUNT.title,
          body: <AccountConsole api={api} meta={meta} organizationName={config.organizationName} setStatus={setStatus} setError={setError} error={error} messageOf={messageOf}
            onSignedOut={(message, deactivated) => {
              emailRef.current = undefined;
              if (deactivated) go({ name: 'message', title: ACCOUNT.deactivate.doneTitle, text: message });
              else go({ name: 'login' }, { status: message });
            }} />,
        };
      case 'dev-outbox':
        return { title: 'Development outbox', body: <DevOutbox api={api} setStatus={setStatus} setError={setError} error={error} /> };
      case 'message':
        return { title: screen.title, body: <><p>{screen.text}</p><p class="links">{link({ name: 'login' }, 'Back to sign in')}</p></> };
      case 'error':
        return {
          title: 'Sign-in failed',
          body: (
            <>
              <p>Error code: <code id="error-code">{screen.code}</code></p>
              <p class="links">{link({ name: 'login' }, 'Back to sign in')}</p>
            </>
          ),
        };
      case 'signed-in': {
        const u = screen.user;
        const who = u.email || u.phone_number || u.id;
        return {
          title: 'You are signed in',
          body: (
            <>
              <p>Signed in as <strong>{who}</strong>.</p>
              {returnTo && <p><a class="button" href={returnTo}>Continue</a></p>}
              <p>{link({ name: 'account' }, 'Manage your account')}</p>
              <button type="button" class="secondary" disabled={busy} onClick={run(async () => {
                const out = await api.post('logout');
                emailRef.current = undefined;
                go({ name: 'login' }, { status: out.message });
              })}>Sign out</button>
            </>
          ),
        };
      }
      default: {
        const never: never = screen;
        return never;
      }
    }
  };

  const { title, body } = view();
  useEffect(() => { document.title = `${title} · ${config.organizationName}`; }, [title]);
  return (
    <>
      <header class="brand">
        {config.organizationLogo && <img class="logo" src={config.organizationLogo} alt="" />}
        <span>{config.organizationName}</span>
      </header>
      <main aria-busy={busy || screen.name === 'loading'}>
        <h1 ref={headingRef} tabIndex={-1}>{title}</h1>
        <p role="status" class="status">{status}</p>
        <p role="alert" id="form-error" class="error">{error}</p>
        {body}
      </main>
    </>
  );
}

function TotpVerify(p: { busy: boolean; error: string; passkey: boolean; onPasskey: () => void; onSubmit: (otp: string) => void }): JSX.Element {
  const [recovery, setRecovery] = useState(false);
  return (
    <>
      <p>{recovery ? 'Enter one of the recovery codes you saved when you set up your authenticator app.' : 'Enter the 6-digit code from your authenticator app.'}</p>
      <Form submit="Verify" busy={p.busy} id="totp" onSubmit={() => p.onSubmit((formValues('totp').otp ?? '').trim())}>
        <Field name="otp" label={recovery ? 'Recovery code' : 'Code from the app'} autoComplete="one-time-code" inputMode={recovery ? 'text' : 'numeric'} error={p.error} required />
      </Form>
      <button type="button" class="link" onClick={() => setRecovery(!recovery)}>{recovery ? 'Use the authenticator app' : 'Use a recovery code'}</button>
      {p.passkey && <button type="button" class="secondary" disabled={p.busy} onClick={p.onPasskey}>Use a passkey instead</button>}
    </>
  );
}

/** Buttons for the providers Meta reports as enabled (none unless configured); each starts `/oauth_login/<provider>` (graphql.md "oauthLogin"). */
function Social(p: { meta: Meta; basePath: string; returnUrl: string }): JSX.Element | null {
  const enabled = PROVIDERS.filter(([id]) => p.meta[`is_${id}_login_enabled`] === true);
  if (enabled.length === 0) return null;
  return (
    <nav aria-label="Sign in with another account" class="social">
      {enabled.map(([id, label]) => (
        <a key={id} class="button secondary" href={`${p.basePath}/oauth_login/${id}?${new URLSearchParams({ redirect_uri: p.returnUrl }).toString()}`}>Continue with {label}</a>
      ))}
    </nav>
  );
}
