/**
 * @module dashboard/pages/audit
 * The audit log, newest first (`POST /v1/admin/audit_logs`): filters by action, actor, resource
 * type and id and a time range (local date-times sent as Unix seconds), paging, and each row's
 * metadata (a JSON object) shown on demand.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { Req } from '../api.ts';
import { t } from '../strings.ts';
import { Field, Messages, ListEnd, Title, useCall, when } from '../ui.tsx';

const LIMIT = 20;
const EMPTY = { action: '', actor_id: '', resource_type: '', resource_id: '', from: '', to: '' };

/** A `datetime-local` value as Unix seconds, null when empty. */
const seconds = (v: string): number | null => (v ? Math.floor(new Date(v).getTime() / 1000) : null);

/** The metadata string pretty-printed when it is JSON. */
function pretty(metadata: string | null | undefined): string {
  if (!metadata) return '{}';
  try {
    return JSON.stringify(JSON.parse(metadata), null, 2);
  } catch {
    return metadata;
  }
}

export function AuditLog(): JSX.Element {
  const [form, setForm] = useState(EMPTY);
  const [applied, setApplied] = useState(EMPTY);
  const [page, setPage] = useState(1);
  const [open, setOpen] = useState<string | null>(null);
  const req: Req<'audit_logs'> = {
    pagination: { page, limit: LIMIT },
    action: applied.action || null, actor_id: applied.actor_id || null,
    resource_type: applied.resource_type || null, resource_id: applied.resource_id || null,
    from_timestamp: seconds(applied.from), to_timestamp: seconds(applied.to),
  };
  const { data, error, loading } = useCall('audit_logs', req);
  const set = (k: keyof typeof EMPTY) => (v: string) => setForm({ ...form, [k]: v });
  return (
    <main id="main" aria-busy={loading ? 'true' : 'false'}>
      <Title>{t.audit.title}</Title>
      <Messages error={error} status="" />
      <form class="filters" aria-labelledby="filters" onSubmit={(e) => { e.preventDefault(); setPage(1); setApplied(form); }}>
        <h2 id="filters">{t.audit.filters}</h2>
        <div class="grid">
          <Field id="f-action" label={t.audit.action} value={form.action} onInput={set('action')} hint={t.audit.actionHint} />
          <Field id="f-actor" label={t.audit.actor} value={form.actor_id} onInput={set('actor_id')} />
          <Field id="f-rtype" label={t.audit.resourceType} value={form.resource_type} onInput={set('resource_type')} />
          <Field id="f-rid" label={t.audit.resourceId} value={form.resource_id} onInput={set('resource_id')} />
          <Field id="f-from" label={t.audit.from} type="datetime-local" value={form.from} onInput={set('from')} />
          <Field id="f-to" label={t.audit.to} type="datetime-local" value={form.to} onInput={set('to')} />
        </div>
        <div class="row">
          <button type="submit">{t.audit.apply}</button>
          <button type="button" class="secondary" onClick={() => { setForm(EMPTY); setApplied(EMPTY); setPage(1); }}>{t.audit.clear}</button>
        </div>
      </form>
      {data ? (
        <>
          <table>
            <caption class="visually-hidden">{t.audit.table}</caption>
            <thead><tr><th scope="col">{t.audit.time}</th><th scope="col">{t.audit.action}</th><th scope="col">{t.audit.actorCol}</th><th scope="col">{t.audit.resource}</th><th scope="col">{t.audit.ip}</th><th scope="col">{t.audit.metadata}</th></tr></thead>
            <tbody>
              {data.audit_logs.flatMap((row) => {
                const shown = open === row.id;
                const cells = (
                  <tr key={row.id}>
                    <td>{when(row.created_at)}</td>
                    <td><code>{row.action}</code></td>
                    <td>{row.actor_email || row.actor_id || row.actor_type || t.common.none}</td>
                    <td>{[row.resource_type, row.resource_id].filter(Boolean).join(' ') || t.common.none}</td>
                    <td>{row.ip_address || t.common.none}</td>
                    <td>
                      <button type="button" class="link" aria-expanded={shown ? 'true' : 'false'} aria-controls={`meta-${row.id}`}
                        onClick={() => setOpen(shown ? null : row.id)}>{shown ? t.audit.hideMetadata : t.audit.showMetadata}<span class="visually-hidden"> {row.action}</span></button>
                    </td>
                  </tr>
                );
                return shown ? [cells, <tr key={`${row.id}-meta`} id={`meta-${row.id}`}><td colSpan={6}><pre class="metadata" aria-label={t.audit.metadata}>{pretty(row.metadata)}</pre></td></tr>] : [cells];
              })}
            </tbody>
          </table>
          <ListEnd rows={data.audit_logs.length} empty={t.audit.empty} pagination={data.pagination} page={page} limit={LIMIT} noun={t.audit.noun} onPage={setPage} />
        </>
      ) : null}
    </main>
  );
}
