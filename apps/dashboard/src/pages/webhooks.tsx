/**
 * @module dashboard/pages/webhooks
 * Webhooks (`/v1/admin/webhooks`, `add_webhook`, `update_webhook`, `delete_webhook`,
 * `test_endpoint`, `webhook_logs`): add one (its signing secret is shown once, with a copy button),
 * edit it, enable or disable it, rotate its secret (shown once again), delete it after a
 * confirmation, send a test event and see the endpoint's answer, and list its deliveries with their
 * HTTP status and attempt.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { Res } from '../api.ts';
import { t } from '../strings.ts';
import { Check, Confirm, Field, Messages, OnceSecret, ListEnd, Title, useAction, useCall, useConsole, when } from '../ui.tsx';

const LIMIT = 10;
type Webhook = Res<'webhook'>;
const BLANK = { event_name: '', event_description: '', endpoint: '', enabled: true };

export function Webhooks(): JSX.Element {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const { data, error: loadError, loading } = useCall('webhooks', { page, limit: LIMIT });
  const [form, setForm] = useState(BLANK);
  const [editing, setEditing] = useState<string | null>(null);
  const { error, status, busy, run } = useAction();
  const [secret, setSecret] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<Webhook | null>(null);
  const [logsOf, setLogsOf] = useState<Webhook | null>(null);

  const submit = (e: Event): void => {
    e.preventDefault();
    run(async () => {
      if (editing) {
        await api.call('update_webhook', { id: editing, ...form });
        setEditing(null);
        setForm(BLANK);
        return t.webhooks.updated;
      }
      const added = await api.call('add_webhook', form);
      setSecret(added.signing_secret);
      setForm(BLANK);
      return t.webhooks.created;
    });
  };
  const set = <K extends keyof typeof BLANK>(k: K) => (v: (typeof BLANK)[K]) => setForm({ ...form, [k]: v });

  return (
    <main id="main" aria-busy={loading || busy ? 'true' : 'false'}>
      <Title>{t.webhooks.title}</Title>
      <Messages error={error || loadError} status={status} />
      {secret ? <OnceSecret title={t.webhooks.secretTitle} note={t.webhooks.secretOnce} secret={secret} onDone={() => setSecret(null)} /> : null}
      <section aria-labelledby="wh-form">
        <h2 id="wh-form">{editing ? t.webhooks.edit : t.webhooks.add}</h2>
        <form onSubmit={submit}>
          <Field id="wh-event" label={t.webhooks.event} value={form.event_name} onInput={set('event_name')} hint={t.webhooks.eventHint} required />
          <Field id="wh-endpoint" label={t.webhooks.endpoint} type="url" value={form.endpoint} onInput={set('endpoint')} required />
          <Field id="wh-description" label={t.webhooks.description} value={form.event_description} onInput={set('event_description')} />
          <Check id="wh-enabled" label={t.webhooks.enabled} checked={form.enabled} onChange={set('enabled')} />
          <div class="row">
            <button type="submit" disabled={busy}>{editing ? t.webhooks.save : t.webhooks.create}</button>
            <button type="button" class="secondary" disabled={busy || !form.endpoint} onClick={() => run(async () => {
              const r = await api.call('test_endpoint', { endpoint: form.endpoint, event_name: form.event_name || 'user.created' });
              return t.webhooks.testResult(r.http_status ?? 0, r.response ?? '');
            })}>{t.webhooks.test}</button>
            {editing ? <button type="button" class="secondary" onClick={() => { setEditing(null); setForm(BLANK); }}>{t.common.cancel}</button> : null}
          </div>
        </form>
      </section>
      {confirm ? (
        <Confirm id="wh-confirm" text={t.webhooks.confirmDelete(confirm.endpoint ?? '')} yes={t.webhooks.deleteYes} onNo={() => setConfirm(null)}
          onYes={() => { const id = confirm.id; setConfirm(null); run(async () => { await api.call('delete_webhook', { id }); return t.webhooks.deleted; }); }} />
      ) : null}
      {data ? (
        <>
          <table>
            <caption class="visually-hidden">{t.webhooks.table}</caption>
            <thead><tr><th scope="col">{t.webhooks.event}</th><th scope="col">{t.webhooks.endpoint}</th><th scope="col">{t.webhooks.enabled}</th><th scope="col">{t.webhooks.actions}</th></tr></thead>
            <tbody>
              {data.webhooks.map((w) => (
                <tr key={w.id}>
                  <td><code>{w.event_name}</code>{w.event_description ? <div class="hint">{w.event_description}</div> : null}</td>
                  <td class="wrap">{w.endpoint}</td>
                  <td>{w.enabled ? t.common.yes : t.common.no}</td>
                  <td class="actions">
                    <button type="button" class="link" aria-label={`${t.webhooks.edit} ${w.endpoint}`} onClick={() => {
                      setEditing(w.id);
                      setForm({ event_name: w.event_name ?? '', event_description: w.event_description ?? '', endpoint: w.endpoint ?? '', enabled: w.enabled !== false });
                      document.getElementById('wh-event')?.focus();
                    }}>{t.webhooks.edit}</button>
                    <button type="button" class="link" aria-label={`${w.enabled ? t.webhooks.disable : t.webhooks.enable} ${w.endpoint}`}
                      onClick={() => run(async () => { await api.call('update_webhook', { id: w.id, enabled: !w.enabled }); return t.webhooks.updated; })}>{w.enabled ? t.webhooks.disable : t.webhooks.enable}</button>
                    <button type="button" class="link" aria-label={`${t.webhooks.rotate} ${w.endpoint}`} onClick={() => run(async () => {
                      const r = await api.call('update_webhook', { id: w.id, rotate_signing_secret: true });
                      setSecret(r.signing_secret ?? null);
                      return t.webhooks.updated;
                    })}>{t.webhooks.rotate}</button>
                    <button type="button" class="link" aria-label={`${t.webhooks.showLogs} ${w.endpoint}`} onClick={() => setLogsOf(w)}>{t.webhooks.showLogs}</button>
                    <button type="button" class="link danger" aria-label={`${t.webhooks.delete} ${w.endpoint}`} onClick={() => setConfirm(w)}>{t.webhooks.delete}</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <ListEnd rows={data.webhooks.length} empty={t.webhooks.empty} pagination={data.pagination} page={page} limit={LIMIT} noun={t.webhooks.noun} onPage={setPage} />
        </>
      ) : null}
      {logsOf ? <Logs key={logsOf.id} webhook={logsOf} onClose={() => setLogsOf(null)} /> : null}
    </main>
  );
}

/** One webhook's deliveries, newest first, with status and attempt. */
function Logs({ webhook, onClose }: { webhook: Webhook; onClose(): void }): JSX.Element {
  const [page, setPage] = useState(1);
  const { data, error } = useCall('webhook_logs', { webhook_id: webhook.id, pagination: { page, limit: LIMIT } });
  return (
    <section aria-labelledby="wh-logs">
      <h2 id="wh-logs" tabIndex={-1}>{t.webhooks.logsFor(webhook.endpoint ?? '')}</h2>
      <Messages error={error} status="" />
      {data ? (
        <>
          <table>
            <caption class="visually-hidden">{t.webhooks.logs}</caption>
            <thead><tr><th scope="col">{t.webhooks.time}</th><th scope="col">{t.webhooks.status}</th><th scope="col">{t.webhooks.attempt}</th><th scope="col">{t.webhooks.response}</th></tr></thead>
            <tbody>
              {data.webhook_logs.map((l) => (
                <tr key={l.id}><td>{when(l.created_at)}</td><td>{l.http_status ?? t.common.none}</td><td>{l.attempt ?? t.common.none}</td><td class="wrap">{l.response ?? ''}</td></tr>
              ))}
            </tbody>
          </table>
          <ListEnd rows={data.webhook_logs.length} empty={t.webhooks.noLogs} pagination={data.pagination} page={page} limit={LIMIT} noun={t.webhooks.logs} onPage={setPage} />
        </>
      ) : null}
      <button type="button" class="secondary" onClick={onClose}>{t.webhooks.close}</button>
    </section>
  );
}
