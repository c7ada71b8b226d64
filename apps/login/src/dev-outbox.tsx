/**
 * @module login/dev-outbox
 * The "Development outbox" page at `/app/dev-outbox` (issue 33 §4): under `--env=development` without
 * SMTP or Twilio, the emails and text messages Gatehouse would have sent, newest first, with their links
 * and codes. For the super-admin only: it reads `GET /v1/admin/dev_outbox` with the `service-admin`
 * cookie, and asks for the admin secret (`POST /v1/admin/login`) when there is none.
 */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, type Api } from './api.ts';

/** One kept message (proto `gatehouse.admin.v1.DevOutboxMessage`). */
export interface DevOutboxMessage {
  id: string;
  channel: 'email' | 'sms';
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Unix seconds */
  created_at: number;
}

/** http(s) links of a message's text, to be followed from the page. */
export const linksOf = (text: string): string[] => [...new Set(text.match(/https?:\/\/[^\s<>"')\]]+/g) ?? [])];

type Phase = { name: 'loading' } | { name: 'sign-in' } | { name: 'list'; messages: DevOutboxMessage[] } | { name: 'refused'; message: string };

/** The page body; the caller renders the heading. */
export function DevOutbox(p: { api: Api; setStatus: (s: string) => void; setError: (s: string) => void; error: string }): JSX.Element {
  const [phase, setPhase] = useState<Phase>({ name: 'loading' });
  const [busy, setBusy] = useState(false);

  const load = async (): Promise<void> => {
    try {
      const out = await p.api.get<{ messages?: DevOutboxMessage[] }>('admin/dev_outbox');
      setPhase({ name: 'list', messages: out.messages ?? [] });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setPhase({ name: 'sign-in' });
      else setPhase({ name: 'refused', message: err instanceof Error ? err.message : String(err) });
    }
  };
  const act = (action: () => Promise<void>) => async (): Promise<void> => {
    setBusy(true);
    p.setError('');
    p.setStatus('');
    try {
      await action();
    } catch (err) {
      p.setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => { void load(); }, []);

  switch (phase.name) {
    case 'loading':
      return <p>Loading…</p>;
    case 'refused':
      return <p role="note">{phase.message}</p>;
    case 'sign-in':
      return (
        <>
          <p>The development outbox is for the super-admin. Enter the admin secret (<code>--admin-secret</code>) to open it.</p>
          <form id="admin-login" onSubmit={(e) => {
            e.preventDefault();
            const secret = String(new FormData(e.currentTarget).get('admin_secret') ?? '');
            void act(async () => { await p.api.post('admin/login', { admin_secret: secret }); await load(); })();
          }}>
            <div class="field">
              <label for="f-admin_secret">Admin secret</label>
              <input id="f-admin_secret" name="admin_secret" type="password" autoComplete="current-password" required
                aria-invalid={p.error ? 'true' : undefined} aria-describedby={p.error ? 'form-error' : undefined} />
            </div>
            <button type="submit" disabled={busy}>Open the outbox</button>
          </form>
        </>
      );
    case 'list':
      return (
        <>
          <p>Messages Gatehouse kept instead of sending them (no SMTP or SMS provider in development), newest first; the last 100 are kept until the server stops.</p>
          <button type="button" class="secondary" disabled={busy} onClick={act(async () => { await load(); p.setStatus('Refreshed.'); })}>Refresh</button>
          {phase.messages.length === 0 && <p>No messages yet.</p>}
          <ol class="outbox" aria-label="Kept messages">
            {phase.messages.map((m) => (
              <li key={m.id}>
                <article aria-labelledby={`m-${m.id}`}>
                  <h2 id={`m-${m.id}`}>{m.channel === 'sms' ? 'Text message' : m.subject}</h2>
                  <dl>
                    <dt>To</dt><dd>{m.to}</dd>
                    <dt>Channel</dt><dd>{m.channel === 'sms' ? 'SMS' : 'Email'}</dd>
                    <dt>Kept at</dt><dd><time dateTime={new Date(m.created_at * 1000).toISOString()}>{new Date(m.created_at * 1000).toLocaleString()}</time></dd>
                  </dl>
                  {linksOf(m.text).map((href) => <p key={href} class="secret"><a href={href}>{href}</a></p>)}
                  <pre class="message">{m.text}</pre>
                </article>
              </li>
            ))}
          </ol>
          <button type="button" class="link" disabled={busy} onClick={act(async () => { await p.api.post('admin/logout'); setPhase({ name: 'sign-in' }); })}>Close the admin session</button>
        </>
      );
    default: {
      const never: never = phase;
      return never;
    }
  }
}
