/**
 * @module dashboard/app
 * The admin console (issue 33 §1): signed in with the admin secret (`POST /v1/admin/login` sets the
 * HttpOnly `service-admin` cookie), it checks the session at start (`GET /v1/admin/session`), and any
 * 401 answer afterwards (the session expired, or was ended elsewhere) returns to the sign-in screen
 * with a notice. Sign out is `POST /v1/admin/logout`. The pages live under `/dashboard` and are
 * addressable (history API): `/dashboard` (overview), `/dashboard/users`, `/dashboard/users/<id>`,
 * `/dashboard/audit-log`, `/dashboard/webhooks`, `/dashboard/clients`, `/dashboard/authorization`,
 * `/dashboard/organizations`, `/dashboard/organizations/<id>`, `/dashboard/trusted-issuers`,
 * `/dashboard/email-templates`, `/dashboard/invitations`, `/dashboard/dev-outbox`.
 *
 * Data: every page reads and writes through TanStack Query (ui.tsx's hooks over api.ts's typed
 * `call`), one cache per console, emptied when the session ends so the next sign-in starts afresh.
 * Widgets: ui.tsx's fields, checkbox, pager and confirmation are React Aria Components.
 *
 * Accessibility: a skip link, a labelled navigation landmark with `aria-current` on the page shown,
 * every input labelled, the heading of a new page focused, errors in `role="alert"` and outcomes in
 * `role="status"`.
 */
import type { JSX } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createApi } from './api.ts';
import type { ConsoleConfig } from './config.ts';
import { t } from './strings.ts';
import { Ctx, errorText, Field, Messages, Title, type ConsoleContext } from './ui.tsx';
import { Overview } from './pages/overview.tsx';
import { UserDetail, Users } from './pages/users.tsx';
import { AuditLog } from './pages/audit.tsx';
import { Webhooks } from './pages/webhooks.tsx';
import { Clients } from './pages/clients.tsx';
import { Authorization } from './pages/authz.tsx';
import { OrganizationDetail, Organizations } from './pages/organizations.tsx';
import { TrustedIssuers } from './pages/issuers.tsx';
import { EmailTemplates } from './pages/templates.tsx';
import { Invitations } from './pages/invitations.tsx';
import { DevOutbox } from './pages/outbox.tsx';

type Session = 'checking' | 'signed-out' | 'signed-in';

/**
 * The console's query cache: a refused read is shown at once (no retry), and a read is fetched
 * again when its page is shown or an action made it stale, not on window focus (a form being typed
 * into is not reset behind the person's back).
 */
function newQueryClient(): QueryClient {
  return new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false }, mutations: { retry: false } } });
}

const NAV: ReadonlyArray<[string, string]> = [
  ['/', t.nav.overview], ['/users', t.nav.users], ['/invitations', t.nav.invitations], ['/organizations', t.nav.orgs], ['/clients', t.nav.clients],
  ['/trusted-issuers', t.nav.issuers], ['/webhooks', t.nav.webhooks], ['/email-templates', t.nav.templates], ['/audit-log', t.nav.audit],
  ['/authorization', t.nav.authz], ['/dev-outbox', t.nav.outbox],
];

/** The console path of the location (`/users/abc`), `/` for the overview. */
function currentPath(prefix: string): string {
  const p = location.pathname.startsWith(prefix) ? location.pathname.slice(prefix.length) : '/';
  return p === '' ? '/' : p.replace(/\/+$/, '') || '/';
}

export function App({ config }: { config: ConsoleConfig }): JSX.Element {
  const prefix = `${config.basePath}/dashboard`;
  const [session, setSession] = useState<Session>('checking');
  const [notice, setNotice] = useState('');
  const [path, setPath] = useState(() => currentPath(prefix));
  const queryClient = useMemo(newQueryClient, []);
  useEffect(() => { if (session === 'signed-out') queryClient.clear(); }, [session]);
  const ctx = useMemo<ConsoleContext>(() => {
    const api = createApi(config.basePath, () => { setNotice(t.signIn.expired); setSession('signed-out'); });
    return {
      api,
      config,
      href: (p) => (p === '/' ? prefix : `${prefix}${p}`),
      navigate: (p, flash) => {
        history.pushState(flash ? { flash } : null, '', p === '/' ? prefix : `${prefix}${p}`);
        setPath(currentPath(prefix));
      },
    };
  }, [config]);

  useEffect(() => {
    const onPop = (): void => setPath(currentPath(prefix));
    addEventListener('popstate', onPop);
    ctx.api.call('session', {}).then(() => setSession('signed-in'), () => { setNotice(''); setSession('signed-out'); });
    return () => removeEventListener('popstate', onPop);
  }, []);

  if (session === 'checking') return <main aria-busy="true"><p>{t.common.loading}</p></main>;
  if (session === 'signed-out') return <SignIn ctx={ctx} notice={notice} onSignedIn={() => { setNotice(''); setSession('signed-in'); }} />;

  const signOut = (): void => {
    ctx.api.call('logout', {}).catch(() => undefined).finally(() => { setNotice(t.signIn.signedOut); setSession('signed-out'); });
  };
  const section = path === '/' ? '/' : `/${path.split('/')[1]}`;
  return (
    <QueryClientProvider client={queryClient}>
      <Ctx.Provider value={ctx}>
        <a class="skip" href="#main">{t.nav.skip}</a>
        <header class="top">
          <span class="brand">{t.appName}</span>
          <nav aria-label={t.nav.label}>
            <ul>
              {NAV.map(([p, label]) => (
                <li key={p}>
                  <a href={ctx.href(p)} aria-current={section === p ? 'page' : undefined}
                    onClick={(e) => { e.preventDefault(); ctx.navigate(p); }}>{label}</a>
                </li>
              ))}
            </ul>
          </nav>
          <button type="button" class="secondary" onClick={signOut}>{t.nav.signOut}</button>
        </header>
        <Page path={path} />
      </Ctx.Provider>
    </QueryClientProvider>
  );
}

function Page({ path }: { path: string }): JSX.Element {
  const user = /^\/users\/([^/]+)$/.exec(path);
  if (user) return <UserDetail key={user[1]} id={decodeURIComponent(user[1]!)} />;
  const org = /^\/organizations\/([^/]+)$/.exec(path);
  if (org) return <OrganizationDetail key={org[1]} id={decodeURIComponent(org[1]!)} />;
  switch (path) {
    case '/users': return <Users />;
    case '/audit-log': return <AuditLog />;
    case '/webhooks': return <Webhooks />;
    case '/clients': return <Clients />;
    case '/authorization': return <Authorization />;
    case '/organizations': return <Organizations />;
    case '/trusted-issuers': return <TrustedIssuers />;
    case '/email-templates': return <EmailTemplates />;
    case '/invitations': return <Invitations />;
    case '/dev-outbox': return <DevOutbox />;
    default: return <Overview />;
  }
}

function SignIn({ ctx, notice, onSignedIn }: { ctx: ConsoleContext; notice: string; onSignedIn(): void }): JSX.Element {
  const [secret, setSecret] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = (e: Event): void => {
    e.preventDefault();
    setBusy(true);
    setError('');
    ctx.api.call('login', { admin_secret: secret })
      .then(() => { setSecret(''); onSignedIn(); }, (err: unknown) => setError(errorText(err)))
      .finally(() => setBusy(false));
  };
  return (
    <main id="main" class="narrow" aria-busy={busy ? 'true' : 'false'}>
      <Title>{t.signIn.title}</Title>
      <Messages error={error} status={notice} />
      <form onSubmit={submit}>
        <Field id="admin-secret" label={t.signIn.secret} type="password" value={secret} onInput={setSecret} hint={t.signIn.secretHint} required autoComplete="current-password" />
        <button type="submit" disabled={busy}>{t.signIn.submit}</button>
      </form>
    </main>
  );
}
