/**
 * @module dashboard/pages/authz
 * Authorization (the relationship engine): the model editor (`GET|POST /v1/admin/fga/model`; a
 * refused model's message names the line and column of the error, and the cursor is put there), the
 * tuples browser with filters and continuation paging (`fga/tuples/read`), writing a tuple (with an
 * optional condition and the condition's own context, a JSON object) and deleting one after a confirmation (`fga/tuples`, `fga/tuples/delete`), and
 * a tester that lists who has a relation on an object (`fga/list_users`, with optional contextual
 * tuples and a condition context) and draws the expansion tree of that relation (`fga/expand`, from
 * the stored tuples: the contract's Expand takes neither) as nested lists. Also the model's version history
 * (`fga/models`, newest first, each version's text on demand; an earlier version is made current again
 * by writing its text as a new version, after a confirmation) and a tester of one user's
 * permissions: a check (`POST /v1/check_permissions`) and the objects the user holds a relation on
 * (`POST /v1/list_permissions`), both called with the super-admin session and an explicit `user`, with
 * optional contextual tuples (counted for that call only) and a condition context (OpenFGA schema 1.1
 * conditions). Reads are TanStack Query queries (the tuples and versions as infinite queries read by
 * continuation token); every write fetches them again.
 */
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Res } from '../api.ts';
import { t } from '../strings.ts';
import { Area, Confirm, errorText, Field, Messages, Title, useAction, useCall, useConsole, usePages } from '../ui.tsx';

type Tuple = Res<'fga/tuples/read'>['tuples'][number];
const PAGE = 20;
const show = (x: Tuple): string => `${x.user ?? ''} ${x.relation ?? ''} ${x.object ?? ''}`;

/**
 * A condition context typed as JSON: undefined when blank.
 * @throws Error `t.authz.contextInvalid` when the text is not a JSON object
 */
export function parseContext(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(t.authz.contextInvalid);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(t.authz.contextInvalid);
  return value as Record<string, unknown>;
}

/**
 * Contextual tuples typed one per line as `user relation object` (blank lines skipped).
 * @throws Error `t.authz.tupleLineInvalid(n)` for a line without exactly three words
 */
export function parseTuples(text: string): Array<{ user: string; relation: string; object: string }> {
  const out: Array<{ user: string; relation: string; object: string }> = [];
  text.split('\n').forEach((line, i) => {
    const words = line.trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) return;
    if (words.length !== 3) throw new Error(t.authz.tupleLineInvalid(i + 1));
    out.push({ user: words[0]!, relation: words[1]!, object: words[2]! });
  });
  return out;
}

/** `line L, column C` of a refused model's message, 1-based, or null. */
export function errorPosition(message: string): { line: number; column: number } | null {
  const m = /line (\d+), column (\d+)/.exec(message);
  return m ? { line: Number(m[1]), column: Number(m[2]) } : null;
}

/** The offset in `text` of a 1-based line and column. */
function offsetOf(text: string, line: number, column: number): number {
  const lines = text.split('\n');
  let offset = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) offset += lines[i]!.length + 1;
  return Math.min(offset + column - 1, text.length);
}

export function Authorization(): JSX.Element {
  return (
    <main id="main" aria-busy="false">
      <Title>{t.authz.title}</Title>
      <ModelEditor />
      <ModelHistory />
      <TuplesBrowser />
      <PermissionTester />
      <Tester />
    </main>
  );
}

const HISTORY_PAGE = 10;
type Model = Res<'fga/models'>['models'][number];

/**
 * The stored model versions, newest first (`fga/models`), each with its text on demand. "Make
 * current" writes an earlier version's text again (`POST fga/model`): the engine keeps versions
 * immutable, so the restored model is a new version with the old text.
 */
function ModelHistory(): JSX.Element {
  const { api } = useConsole();
  const history = usePages(['fga/models'], async (token) => {
    const page = await api.call('fga/models', { page_size: HISTORY_PAGE, continuation_token: token });
    return { rows: page.models, token: page.continuation_token };
  });
  const rows = history.data ?? [];
  const [open, setOpen] = useState<string | null>(null);
  const [restore, setRestore] = useState<Model | null>(null);
  const action = useAction();
  return (
    <section aria-labelledby="az-history" aria-busy={history.loading ? 'true' : 'false'}>
      <h2 id="az-history">{t.authz.history}</h2>
      <Messages error={history.error || action.error} status={action.status} />
      {restore ? (
        <Confirm id="az-restore" text={t.authz.confirmRestore(restore.id)} yes={t.authz.restoreYes} onNo={() => setRestore(null)}
          onYes={() => {
            const { id, dsl } = restore;
            setRestore(null);
            action.run(async () => t.authz.restored(id, (await api.call('POST fga/model', { dsl })).id));
          }} />
      ) : null}
      <table>
        <caption class="visually-hidden">{t.authz.history}</caption>
        <thead><tr><th scope="col">{t.authz.version}</th><th scope="col">{t.authz.versionState}</th><th scope="col">{t.authz.actions}</th></tr></thead>
        <tbody>
          {rows.map((m, i) => (
            <tr key={m.id}>
              <td><code>{m.id}</code>{open === m.id ? <pre class="code" data-testid={`model-${m.id}`}>{m.dsl}</pre> : null}</td>
              <td>{i === 0 ? t.authz.active : t.authz.older}</td>
              <td><button type="button" class="link" aria-expanded={open === m.id ? 'true' : 'false'} aria-label={`${open === m.id ? t.authz.hideModel : t.authz.showModel} ${m.id}`}
                onClick={() => setOpen(open === m.id ? null : m.id)}>{open === m.id ? t.authz.hideModel : t.authz.showModel}</button>
              {i === 0 ? null : (
                <button type="button" class="link" disabled={action.busy} aria-label={`${t.authz.restore} ${m.id}`} onClick={() => setRestore(m)}>{t.authz.restore}</button>
              )}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {history.data && rows.length === 0 ? <p>{t.authz.noVersions}</p> : null}
      {history.hasMore ? <button type="button" class="secondary" onClick={history.more}>{t.authz.olderVersions}</button> : null}
    </section>
  );
}

/**
 * The optional inputs of a test (OpenFGA's contextual tuples and condition context), labelled
 * after the tester they belong to so each page field has its own name.
 */
function TestInputs(props: { id: string; tuples: string; context: string; tuplesLabel: string; contextLabel: string; onTuples(v: string): void; onContext(v: string): void }): JSX.Element {
  return (
    <>
      <Area id={`${props.id}-tuples`} label={props.tuplesLabel} value={props.tuples} onInput={props.onTuples} hint={t.authz.contextualTuplesHint} rows={3} code />
      <Field id={`${props.id}-context`} label={props.contextLabel} value={props.context} onInput={props.onContext} hint={t.authz.contextHint} />
    </>
  );
}

/** What one user may do: a check (`check_permissions`) and the objects of a type it holds a relation on (`list_permissions`). */
function PermissionTester(): JSX.Element {
  const { api } = useConsole();
  const [form, setForm] = useState({ user: '', relation: '', object: '', object_type: '', tuples: '', context: '' });
  const [answer, setAnswer] = useState<{ kind: 'check'; allowed: boolean } | { kind: 'list'; permissions: Array<{ object: string; relation: string }>; truncated: boolean } | null>(null);
  const action = useAction({ invalidate: false });
  const set = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  return (
    <section aria-labelledby="az-perm">
      <h2 id="az-perm">{t.authz.permTester}</h2>
      <p class="hint">{t.authz.permTesterHint}</p>
      <Messages error={action.error} status="" />
      <form onSubmit={(e) => e.preventDefault()}>
        <div class="grid">
          <Field id="az-p-user" label={t.authz.permUser} value={form.user} onInput={set('user')} hint={t.authz.userHint} required />
          <Field id="az-p-relation" label={t.authz.permRelation} value={form.relation} onInput={set('relation')} />
          <Field id="az-p-object" label={t.authz.permObject} value={form.object} onInput={set('object')} hint={t.authz.objectHint} />
          <Field id="az-p-type" label={t.authz.permType} value={form.object_type} onInput={set('object_type')} hint={t.authz.permTypeHint} />
        </div>
        <TestInputs id="az-p" tuples={form.tuples} context={form.context} onTuples={set('tuples')} onContext={set('context')}
          tuplesLabel={t.authz.contextualTuples} contextLabel={t.authz.context} />
        <div class="row">
          <button type="button" disabled={action.busy} onClick={() => action.run(async () => {
            setAnswer(null);
            const r = await api.call('check_permissions', {
              user: form.user, context: parseContext(form.context), checks: [{ relation: form.relation, object: form.object, contextual_tuples: parseTuples(form.tuples) }],
            });
            setAnswer({ kind: 'check', allowed: r.results[0]?.allowed === true });
            return '';
          })}>{t.authz.check}</button>
          <button type="button" class="secondary" disabled={action.busy} onClick={() => action.run(async () => {
            setAnswer(null);
            const r = await api.call('list_permissions', {
              user: form.user, object_type: form.object_type || undefined, relation: form.relation || undefined, contextual_tuples: parseTuples(form.tuples), context: parseContext(form.context),
            });
            setAnswer({ kind: 'list', permissions: r.permissions, truncated: r.truncated });
            return '';
          })}>{t.authz.listPermissions}</button>
        </div>
      </form>
      {answer?.kind === 'check' ? (
        <p role="status" data-testid="check-result" class={answer.allowed ? 'on' : 'off'}>{answer.allowed ? t.authz.allowed(form.user, form.relation, form.object) : t.authz.denied(form.user, form.relation, form.object)}</p>
      ) : null}
      {answer?.kind === 'list' ? (
        <div aria-live="polite">
          <p>{t.authz.permissions(answer.permissions.length)}{answer.truncated ? ` ${t.authz.truncated}` : ''}</p>
          <ul data-testid="permissions">{answer.permissions.map((p) => <li key={`${p.relation} ${p.object}`}><code>{p.relation}</code> <code>{p.object}</code></li>)}</ul>
        </div>
      ) : null}
    </section>
  );
}

/** The current model's text (`GET fga/model`), and saving a new version (`POST fga/model`). */
function ModelEditor(): JSX.Element {
  const { api } = useConsole();
  // fetched again after every new version, this editor's or a restored one (the action's invalidation)
  const model = useCall('GET fga/model', {});
  const [dsl, setDsl] = useState('');
  const [where, setWhere] = useState('');
  const action = useAction();
  const area = useRef<HTMLTextAreaElement>(null);
  useEffect(() => { if (model.data) setDsl(model.data.dsl); }, [model.data]);
  /** a refused model keeps the text as typed (nothing is fetched again) and puts the cursor at the error */
  const save = (e: Event): void => {
    e.preventDefault();
    setWhere('');
    action.run(async () => {
      try {
        return t.authz.modelSaved((await api.call('POST fga/model', { dsl })).id);
      } catch (err) {
        const at = errorPosition(errorText(err));
        if (at && area.current) {
          const offset = offsetOf(dsl, at.line, at.column);
          area.current.focus();
          area.current.setSelectionRange(offset, offset);
          setWhere(t.authz.errorAt(at.line, at.column));
        }
        throw err;
      }
    });
  };
  return (
    <section aria-labelledby="az-model" aria-busy={model.loading ? 'true' : 'false'}>
      <h2 id="az-model">{t.authz.model}</h2>
      <Messages error={action.error || model.error} status={action.status} />
      <p class="hint">{t.authz.modelId(model.data?.id ?? '')}</p>
      <form onSubmit={save}>
        <div class="field">
          <label for="az-dsl">{t.authz.dsl}</label>
          <textarea id="az-dsl" ref={area} class="code" rows={14} spellcheck={false} value={dsl} aria-invalid={action.error ? 'true' : undefined}
            aria-describedby="az-dsl-hint az-dsl-where" onInput={(e) => setDsl((e.currentTarget as HTMLTextAreaElement).value)} />
          <p class="hint" id="az-dsl-hint">{t.authz.dslHint}</p>
          <p class="error" id="az-dsl-where">{where}</p>
        </div>
        <button type="submit" disabled={action.busy}>{t.authz.saveModel}</button>
      </form>
    </section>
  );
}

function TuplesBrowser(): JSX.Element {
  const { api } = useConsole();
  const [filter, setFilter] = useState({ user: '', relation: '', object: '' });
  const [applied, setApplied] = useState(filter);
  const tuples = usePages(['fga/tuples/read', applied], async (token) => {
    const page = await api.call('fga/tuples/read', {
      user: applied.user || null, relation: applied.relation || null, object: applied.object || null, page_size: PAGE, continuation_token: token,
    });
    return { rows: page.tuples, token: page.continuation_token };
  });
  const rows = tuples.data ?? [];
  const [form, setForm] = useState({ user: '', relation: '', object: '', condition: '', context: '' });
  const [confirm, setConfirm] = useState<Tuple | null>(null);
  const action = useAction();
  const fset = (k: keyof typeof filter) => (v: string) => setFilter({ ...filter, [k]: v });
  const wset = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  return (
    <section aria-labelledby="az-tuples" aria-busy={tuples.loading ? 'true' : 'false'}>
      <h2 id="az-tuples">{t.authz.tuples}</h2>
      <Messages error={action.error || tuples.error} status={action.status} />
      <form class="filters" onSubmit={(e) => { e.preventDefault(); setApplied(filter); }}>
        <div class="grid">
          <Field id="az-f-user" label={t.authz.filterUser} value={filter.user} onInput={fset('user')} />
          <Field id="az-f-relation" label={t.authz.filterRelation} value={filter.relation} onInput={fset('relation')} />
          <Field id="az-f-object" label={t.authz.filterObject} value={filter.object} onInput={fset('object')} />
        </div>
        <button type="submit">{t.authz.filter}</button>
      </form>
      {confirm ? (
        <Confirm id="az-confirm" text={t.authz.confirmDelete(show(confirm))} yes={t.authz.deleteYes} onNo={() => setConfirm(null)}
          onYes={() => {
            const tuple = { user: confirm.user, relation: confirm.relation, object: confirm.object };
            setConfirm(null);
            action.run(async () => { await api.call('fga/tuples/delete', { tuples: [tuple] }); return t.authz.deleted; });
          }} />
      ) : null}
      <table>
        <caption class="visually-hidden">{t.authz.table}</caption>
        <thead><tr><th scope="col">{t.authz.user}</th><th scope="col">{t.authz.relation}</th><th scope="col">{t.authz.object}</th><th scope="col">{t.authz.condition}</th><th scope="col">{t.authz.actions}</th></tr></thead>
        <tbody>
          {rows.map((x) => (
            <tr key={show(x)}>
              <td><code>{x.user}</code></td><td><code>{x.relation}</code></td><td><code>{x.object}</code></td><td>{x.condition?.name ?? ''}{x.condition?.context ? <div><code>{JSON.stringify(x.condition.context)}</code></div> : null}</td>
              <td><button type="button" class="link danger" aria-label={`${t.authz.delete} ${show(x)}`} onClick={() => setConfirm(x)}>{t.authz.delete}</button></td>
            </tr>
          ))}
        </tbody>
      </table>
      {tuples.data && rows.length === 0 ? <p>{t.authz.empty}</p> : null}
      {tuples.hasMore ? <button type="button" class="secondary" onClick={tuples.more}>{t.authz.more}</button> : null}
      <h3>{t.authz.write}</h3>
      <form onSubmit={(e) => {
        e.preventDefault();
        action.run(async () => {
          const context = parseContext(form.context);
          if (context && !form.condition.trim()) throw new Error(t.authz.contextNeedsCondition);
          const condition = form.condition.trim() ? { condition: { name: form.condition.trim(), ...(context ? { context } : {}) } } : {};
          await api.call('fga/tuples', { tuples: [{ user: form.user, relation: form.relation, object: form.object, ...condition }] });
          setForm({ user: '', relation: '', object: '', condition: '', context: '' });
          return t.authz.written;
        });
      }}>
        <div class="grid">
          <Field id="az-w-user" label={t.authz.user} value={form.user} onInput={wset('user')} hint={t.authz.userHint} required />
          <Field id="az-w-relation" label={t.authz.relation} value={form.relation} onInput={wset('relation')} required />
          <Field id="az-w-object" label={t.authz.object} value={form.object} onInput={wset('object')} hint={t.authz.objectHint} required />
          <Field id="az-w-condition" label={t.authz.condition} value={form.condition} onInput={wset('condition')} />
          <Field id="az-w-context" label={t.authz.conditionContext} value={form.context} onInput={wset('context')} hint={t.authz.conditionContextHint} />
        </div>
        <button type="submit" disabled={action.busy}>{t.authz.writeButton}</button>
      </form>
    </section>
  );
}

/** An expansion tree (JSON) drawn as nested lists: each object key a branch, each array item a node. */
function TreeNode({ value, label }: { value: unknown; label?: string }): JSX.Element {
  if (value === null || typeof value !== 'object') return <li>{label ? <strong>{label}: </strong> : null}<code>{String(value)}</code></li>;
  const entries: Array<[string, unknown]> = Array.isArray(value) ? value.map((v, i) => [String(i + 1), v]) : Object.entries(value);
  return (
    <li>
      {label ? <strong>{label}</strong> : null}
      <ul>{entries.map(([k, v]) => <TreeNode key={k} label={Array.isArray(value) ? undefined : k} value={v} />)}</ul>
    </li>
  );
}

/**
 * Who has a relation on an object: `fga/list_users` (with the test's contextual tuples and condition
 * context, OpenFGA's ListUsers) and the expansion tree of `fga/expand` with the same contextual tuples
 * (OpenFGA's Expand evaluates no condition, so the context does not reach the tree).
 */
function Tester(): JSX.Element {
  const { api } = useConsole();
  const [form, setForm] = useState({ relation: '', object: '', user_type: 'user', tuples: '', context: '' });
  const [answer, setAnswer] = useState<{ users: string[]; truncated: boolean; tree: unknown } | null>(null);
  const action = useAction({ invalidate: false });
  const set = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  return (
    <section aria-labelledby="az-tester">
      <h2 id="az-tester">{t.authz.tester}</h2>
      <p class="hint">{t.authz.testerHint}</p>
      <Messages error={action.error} status="" />
      <form onSubmit={(e) => {
        e.preventDefault();
        action.run(async () => {
          setAnswer(null);
          const request = { object: form.object, relation: form.relation, user_type: form.user_type, contextual_tuples: parseTuples(form.tuples), context: parseContext(form.context) };
          const [users, expand] = await Promise.all([
            api.call('fga/list_users', request),
            api.call('fga/expand', { object: form.object, relation: form.relation, contextual_tuples: request.contextual_tuples }),
          ]);
          let tree: unknown = expand.tree;
          try { tree = JSON.parse(expand.tree); } catch { tree = expand.tree; }
          setAnswer({ users: users.users, truncated: users.truncated, tree });
          return '';
        });
      }}>
        <div class="grid">
          <Field id="az-t-relation" label={t.authz.testRelation} value={form.relation} onInput={set('relation')} required />
          <Field id="az-t-object" label={t.authz.testObject} value={form.object} onInput={set('object')} required />
          <Field id="az-t-type" label={t.authz.userType} value={form.user_type} onInput={set('user_type')} required />
        </div>
        <TestInputs id="az-t" tuples={form.tuples} context={form.context} onTuples={set('tuples')} onContext={set('context')}
          tuplesLabel={t.authz.accessTuples} contextLabel={t.authz.accessContext} />
        <button type="submit" disabled={action.busy}>{t.authz.test}</button>
      </form>
      {answer ? (
        <div aria-live="polite">
          <p>{t.authz.users(answer.users.length)}{answer.truncated ? ` ${t.authz.truncated}` : ''}</p>
          <ul aria-label={t.authz.users(answer.users.length)} data-testid="list-users">{answer.users.map((u) => <li key={u}><code>{u}</code></li>)}</ul>
          <h3>{t.authz.tree}</h3>
          <p class="hint">{t.authz.treeHint}</p>
          <ul class="tree" data-testid="expand-tree"><TreeNode value={answer.tree} /></ul>
        </div>
      ) : null}
    </section>
  );
}
