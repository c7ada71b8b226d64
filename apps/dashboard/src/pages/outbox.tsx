/**
 * @module dashboard/pages/outbox
 * The development outbox (`GET /v1/admin/dev_outbox`): under `--env=development` without SMTP or an
 * SMS provider, the emails and text messages Gatehouse kept instead of sending them, newest first,
 * with their links and one-time codes. A production server, or split mode, refuses the call and the
 * page shows why.
 */
import type { JSX } from 'preact';
import { linksOf } from '../../../login/src/dev-outbox.tsx';
import { t } from '../strings.ts';
import { Messages, Title, useCall, when } from '../ui.tsx';

export function DevOutbox(): JSX.Element {
  const { data, error, loading, reload } = useCall('dev_outbox', {});
  return (
    <main id="main" aria-busy={loading ? 'true' : 'false'}>
      <Title>{t.outbox.title}</Title>
      <p class="hint">{t.outbox.intro}</p>
      <Messages error={error} status="" />
      <button type="button" class="secondary" disabled={loading} onClick={reload}>{t.outbox.refresh}</button>
      {data ? (
        <>
          {data.messages.length === 0 ? <p>{t.outbox.empty}</p> : null}
          <ol class="outbox" aria-label={t.outbox.list}>
            {data.messages.map((m) => (
              <li key={m.id}>
                <article aria-labelledby={`ob-${m.id}`}>
                  <h2 id={`ob-${m.id}`}>{m.channel === 'sms' ? t.outbox.sms : m.subject}</h2>
                  <dl class="facts">
                    <dt>{t.outbox.to}</dt><dd>{m.to}</dd>
                    <dt>{t.outbox.channel}</dt><dd>{m.channel === 'sms' ? t.outbox.smsChannel : t.outbox.emailChannel}</dd>
                    <dt>{t.outbox.kept}</dt><dd>{when(m.created_at)}</dd>
                  </dl>
                  {linksOf(m.text).map((href) => <p key={href} class="wrap"><a href={href}>{href}</a></p>)}
                  <pre class="message">{m.text}</pre>
                </article>
              </li>
            ))}
          </ol>
        </>
      ) : null}
    </main>
  );
}
