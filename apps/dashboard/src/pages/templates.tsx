/**
 * @module dashboard/pages/templates
 * Email templates (`email_templates`, `add_email_template`, `update_email_template`,
 * `delete_email_template`): at most one per event; the form lists the placeholders the event's mail
 * can use and shows the subject and body rendered with sample values as they are typed (preview.ts);
 * a template the server refuses (an unknown event, a construct other than a placeholder) shows the
 * server's message. The template's `design` (the email editor's state, opaque to the server) is
 * edited as JSON text and checked before it is sent.
 */
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Res } from '../api.ts';
import { fill, placeholders, renderPreview } from '../preview.ts';
import { t } from '../strings.ts';
import { Area, Confirm, Field, ListEnd, Messages, Select, Title, useAction, useCall, useConsole, when } from '../ui.tsx';

const LIMIT = 10;
type Template = Res<'email_templates'>['email_templates'][number];
/** The events a template may be stored for, with the variables each mail has besides `user.*` and `organization.*`. */
const EVENTS: Readonly<Record<string, readonly string[]>> = {
  basic_auth_signup: ['verification_url'],
  magic_link_login: ['verification_url'],
  update_email: ['verification_url'],
  forgot_password: ['verification_url'],
  invite_member: ['verification_url'],
  verify_otp: ['otp'],
};
const COMMON = ['user.email', 'user.given_name', 'user.family_name', 'organization.name', 'organization.logo'];
const BLANK = { event_name: 'basic_auth_signup', subject: '', template: '', design: '' };

/**
 * Checks a template's `design` (behaviour.md §EmailTemplate: the email editor's state, opaque to
 * the server, `""` when not given): blank, or JSON text. A design stored elsewhere that is not JSON
 * is passed back untouched while it is not edited (`stored`).
 * @throws Error `t.templates.designInvalid` for text that is neither
 */
export function checkDesign(design: string, stored: string | null): string {
  if (design.trim() === '' || design === stored) return design;
  try {
    JSON.parse(design);
  } catch {
    throw new Error(t.templates.designInvalid);
  }
  return design;
}

export function EmailTemplates(): JSX.Element {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const { data, error: loadError, loading } = useCall('email_templates', { page, limit: LIMIT });
  const { error, status, busy, run } = useAction();
  const [form, setForm] = useState(BLANK);
  const [editing, setEditing] = useState<Template | null>(null);
  const [confirm, setConfirm] = useState<Template | null>(null);
  const preview = useRef<HTMLDivElement>(null);
  useEffect(() => { if (preview.current) renderPreview(form.template, preview.current); }, [form.template]);
  const set = <K extends keyof typeof BLANK>(k: K) => (v: string) => setForm({ ...form, [k]: v });
  const reset = (): void => { setEditing(null); setForm(BLANK); };
  const vars = [...(EVENTS[form.event_name] ?? []), ...COMMON];
  const unknown = placeholders(`${form.subject} ${form.template}`).filter((p) => !vars.includes(p) && !p.startsWith('user.'));
  return (
    <main id="main" aria-busy={loading || busy ? 'true' : 'false'}>
      <Title>{t.templates.title}</Title>
      <Messages error={error || loadError} status={status} />
      <section aria-labelledby="et-form">
        <h2 id="et-form">{editing ? t.templates.edit : t.templates.add}</h2>
        <div class="split">
          <form onSubmit={(e) => {
            e.preventDefault();
            run(async () => {
              const design = checkDesign(form.design, editing ? editing.design : null);
              if (editing) {
                await api.call('update_email_template', { id: editing.id, ...form, design });
                reset();
                return t.templates.updated;
              }
              await api.call('add_email_template', { ...form, design });
              reset();
              return t.templates.added;
            });
          }}>
            <Select id="et-event" label={t.templates.event} value={form.event_name} onChange={set('event_name')} options={Object.keys(EVENTS).map((e) => [e, t.templates.events[e as keyof typeof t.templates.events] ?? e] as const)} />
            <Field id="et-subject" label={t.templates.subject} value={form.subject} onInput={set('subject')} required />
            <Area id="et-body" label={t.templates.body} value={form.template} onInput={set('template')} rows={10} code required hint={t.templates.bodyHint} />
            <Area id="et-design" label={t.templates.design} value={form.design} onInput={set('design')} rows={4} code hint={t.templates.designHint} />
            <p class="hint" id="et-vars">{t.templates.variables} {vars.map((v) => <code key={v}>{`{{.${v}}}`} </code>)}</p>
            {unknown.length ? <p class="hint">{t.templates.unknown(unknown.join(', '))}</p> : null}
            <div class="row">
              <button type="submit" disabled={busy}>{editing ? t.templates.save : t.templates.addButton}</button>
              {editing ? <button type="button" class="secondary" onClick={reset}>{t.common.cancel}</button> : null}
            </div>
          </form>
          <section class="preview" aria-labelledby="et-preview">
            <h3 id="et-preview">{t.templates.preview}</h3>
            <p class="hint">{t.templates.previewHint}</p>
            <p><strong>{t.templates.subject}:</strong> <span data-testid="preview-subject">{fill(form.subject, false)}</span></p>
            <div class="mail" ref={preview} data-testid="preview-body" />
          </section>
        </div>
      </section>
      {confirm ? (
        <Confirm id="et-confirm" text={t.templates.confirmDelete(confirm.event_name)} yes={t.templates.deleteYes} onNo={() => setConfirm(null)}
          onYes={() => { const id = confirm.id; setConfirm(null); run(async () => { await api.call('delete_email_template', { id }); return t.templates.deleted; }); }} />
      ) : null}
      {data ? (
        <>
          <table>
            <caption class="visually-hidden">{t.templates.table}</caption>
            <thead><tr><th scope="col">{t.templates.event}</th><th scope="col">{t.templates.subject}</th><th scope="col">{t.templates.updatedAt}</th><th scope="col">{t.templates.actions}</th></tr></thead>
            <tbody>
              {data.email_templates.map((x) => (
                <tr key={x.id}>
                  <td><code>{x.event_name}</code></td>
                  <td>{x.subject}</td>
                  <td>{when(x.updated_at ?? x.created_at)}</td>
                  <td class="actions">
                    <button type="button" class="link" aria-label={`${t.templates.editButton} ${x.event_name}`} onClick={() => {
                      setEditing(x);
                      setForm({ event_name: x.event_name, subject: x.subject, template: x.template, design: x.design });
                      document.getElementById('et-subject')?.focus();
                    }}>{t.templates.editButton}</button>
                    <button type="button" class="link danger" aria-label={`${t.templates.delete} ${x.event_name}`} onClick={() => setConfirm(x)}>{t.templates.delete}</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <ListEnd rows={data.email_templates.length} empty={t.templates.empty} pagination={data.pagination} page={page} limit={LIMIT} noun={t.templates.noun} onPage={setPage} />
        </>
      ) : null}
    </main>
  );
}
