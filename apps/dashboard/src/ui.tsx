/**
 * @module dashboard/ui
 * The console's shared pieces: the page context (the typed API client and navigation), a page
 * heading that takes the focus when a page opens, labelled fields, the pager, the message regions
 * (`role="alert"` for errors, `role="status"` for outcomes, both announced by screen readers), the
 * one-time secret box with its copy button and the confirmation of a destructive action; and the
 * data hooks every page reads and writes through (TanStack Query over the typed client's `call`):
 * {@link useCall}, {@link useLoad}, {@link usePages} and {@link useAction}.
 *
 * The fields, the checkbox, the buttons and the confirmation are React Aria Components
 * (`react-aria-components`, unstyled: style.css draws them through their classes and `data-*`
 * states), run on Preact through `preact/compat` as TanStack Query is (vite.config.ts).
 */
import type { ComponentChildren, JSX } from 'preact';
import { createContext } from 'preact';
import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import { keepPreviousData, useInfiniteQuery, useMutation, useQuery, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { Button, Checkbox, Dialog, FieldError, Heading, Input, Label, Text, TextArea, TextField } from 'react-aria-components';
import { ApiError, type AdminOperation, type Api, type Req, type Res } from './api.ts';
import type { ConsoleConfig } from './config.ts';
import { t } from './strings.ts';

/** What every page gets: the API, the config and navigation inside `/dashboard`. */
export interface ConsoleContext {
  api: Api;
  config: ConsoleConfig;
  /** the href of a console path (`/users` → `<basePath>/dashboard/users`) */
  href(path: string): string;
  /** goes to a console path (history push); `flash` is announced by the next page (its history state) */
  navigate(path: string, flash?: string): void;
}

export const Ctx = createContext<ConsoleContext | null>(null);

/** The page context. @throws Error outside the console's provider */
export function useConsole(): ConsoleContext {
  const c = useContext(Ctx);
  if (!c) throw new Error('useConsole outside the console');
  return c;
}

/** The flash message the navigation to this page carried, or `''`. */
export function flash(): string {
  const state: unknown = history.state;
  return state && typeof state === 'object' && typeof (state as { flash?: unknown }).flash === 'string' ? (state as { flash: string }).flash : '';
}

/** The user-facing text of a failed call. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

/** The page's `<h1>`, focused when the page opens so screen readers announce it. */
export function Title({ children }: { children: ComponentChildren }): JSX.Element {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => { ref.current?.focus(); }, []);
  return <h1 tabIndex={-1} ref={ref}>{children}</h1>;
}

/** Errors (`role="alert"`) and outcomes (`role="status"`), always present so changes are announced. */
export function Messages({ error, status }: { error: string; status: string }): JSX.Element {
  return (
    <>
      <p class="error" role="alert">{error}</p>
      <p class="status" role="status">{status}</p>
    </>
  );
}

/**
 * A labelled text input: React Aria's `TextField` (the label, the hint as its description and the
 * browser's message for a `required` field left empty are tied to the input by `aria-*`).
 */
export function Field(props: { label: string; value: string; onInput(v: string): void; type?: string; hint?: string; id: string; required?: boolean; autoComplete?: string }): JSX.Element {
  return (
    <TextField className="field" id={props.id} type={props.type ?? 'text'} value={props.value} onChange={props.onInput} isRequired={props.required}
      autoComplete={props.autoComplete ?? 'off'}>
      <Label>{props.label}</Label>
      <Input />
      {props.hint ? <Text slot="description" elementType="p" className="hint">{props.hint}</Text> : null}
      <FieldError className="field-error" />
    </TextField>
  );
}

/** A labelled multi-line text input (a certificate, metadata XML, a template, one URI per line): React Aria's `TextField` with a `TextArea`. */
export function Area(props: { label: string; value: string; onInput(v: string): void; hint?: string; id: string; rows?: number; required?: boolean; code?: boolean }): JSX.Element {
  return (
    <TextField className="field" id={props.id} value={props.value} onChange={props.onInput} isRequired={props.required}>
      <Label>{props.label}</Label>
      <TextArea rows={props.rows ?? 3} className={props.code ? 'code' : undefined} spellcheck={false} />
      {props.hint ? <Text slot="description" elementType="p" className="hint">{props.hint}</Text> : null}
      <FieldError className="field-error" />
    </TextField>
  );
}

/**
 * A labelled drop-down list of `[value, label]` options. It stays the browser's own `<select>`:
 * React Aria's `Select` is a button and a pop-up list box, not a form control the browser (and a
 * person's assistive technology) already knows.
 */
export function Select(props: { label: string; value: string; onChange(v: string): void; id: string; options: ReadonlyArray<readonly [string, string]>; hint?: string }): JSX.Element {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select id={props.id} value={props.value} aria-describedby={props.hint ? `${props.id}-hint` : undefined}
        onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value)}>
        {props.options.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
      </select>
      {props.hint ? <p class="hint" id={`${props.id}-hint`}>{props.hint}</p> : null}
    </div>
  );
}

/** Lines of a text area, trimmed, blank ones dropped (one URI per line). */
export const lines = (s: string): string[] => s.split('\n').map((l) => l.trim()).filter(Boolean);

/** True for an API refusal with HTTP status 404 (a resource that is not there yet: an org's SCIM endpoint, its SSO connection). */
export const notFound = (err: unknown): boolean => err instanceof ApiError && err.status === 404;

/**
 * A labelled checkbox: React Aria's `Checkbox`, a `<label>` around a visually hidden native
 * checkbox (the label's text is its name; a click on the label or Space toggles it) and the box
 * style.css draws from the label's `data-selected` and `data-focus-visible`.
 */
export function Check(props: { label: string; checked: boolean; onChange(v: boolean): void; id: string }): JSX.Element {
  return (
    <Checkbox className="check" id={props.id} isSelected={props.checked} onChange={props.onChange}>
      <span class="box" aria-hidden="true" />
      {props.label}
    </Checkbox>
  );
}

/** Previous/next page buttons (React Aria's `Button`) and the position, for the contract's `Pagination`. */
export function Pager(props: { page: number; limit: number; total: number; noun: string; onPage(page: number): void }): JSX.Element {
  const pages = Math.ceil(props.total / Math.max(props.limit, 1));
  return (
    <nav class="pager" aria-label={props.noun}>
      <Button className="secondary" isDisabled={props.page <= 1} onPress={() => props.onPage(props.page - 1)}>{t.common.previous}</Button>
      <span>{t.common.page(props.page, pages, props.total, props.noun)}</span>
      <Button className="secondary" isDisabled={props.page >= pages} onPress={() => props.onPage(props.page + 1)}>{t.common.next}</Button>
    </nav>
  );
}

/** After a list: its empty message when it has no row, then the {@link Pager} of the answer's `Pagination`. */
export function ListEnd(props: { rows: number; empty: string; pagination: { page: number; limit: number; total: number } | null; page: number; limit: number; noun: string; onPage(page: number): void }): JSX.Element {
  const p = props.pagination;
  return (
    <>
      {props.rows === 0 ? <p>{props.empty}</p> : null}
      <Pager page={p?.page ?? props.page} limit={p?.limit ?? props.limit} total={p?.total ?? 0} noun={props.noun} onPage={props.onPage} />
    </>
  );
}

/** A secret shown once (a webhook signing secret, a client secret), with a copy button; it takes the focus when shown. */
export function OnceSecret(props: { title: string; secret: string; note: string; onDone(): void }): JSX.Element {
  const [copied, setCopied] = useState('');
  const ref = useRef<HTMLElement>(null);
  useEffect(() => { ref.current?.focus(); }, []);
  return (
    <section class="secret-box" aria-labelledby="secret-title" tabIndex={-1} ref={ref}>
      <h2 id="secret-title">{props.title}</h2>
      <p>{props.note}</p>
      <p><code class="secret" data-testid="secret">{props.secret}</code></p>
      <div class="row">
        <Button className="secondary" onPress={() => {
          navigator.clipboard.writeText(props.secret).then(() => setCopied(t.common.copied), () => setCopied(''));
        }}>{t.common.copy}</Button>
        <Button onPress={props.onDone}>{t.common.dismissSecret}</Button>
      </div>
      <p role="status" class="status">{copied}</p>
    </section>
  );
}

/**
 * A confirmation of a destructive action, in the page where it was asked (WAI-ARIA's alert dialog
 * pattern, not modal): React Aria's `Dialog` with `role="alertdialog"`, named by its title (or by
 * its text when it has none) and described by its text. Its confirm button takes the focus; Escape
 * on its buttons is Cancel.
 * @param props.id the id of the text (and the prefix of the title's)
 * @param props.busy true while an action runs: the confirm button is disabled
 */
export function Confirm(props: { id: string; title?: string; text: string; yes: string; busy?: boolean; onYes(): void; onNo(): void }): JSX.Element {
  return (
    <Dialog className="confirm" role="alertdialog" aria-labelledby={props.title ? `${props.id}-title` : props.id} aria-describedby={props.title ? props.id : undefined}>
      <>
        {props.title ? <Heading level={3} id={`${props.id}-title`}>{props.title}</Heading> : null}
        <p id={props.id}>{props.text}</p>
        <div class="row" onKeyDown={(e) => { if (e.key === 'Escape') props.onNo(); }}>
          <Button className="danger" autoFocus isDisabled={props.busy} onPress={props.onYes}>{props.yes}</Button>
          <Button className="secondary" onPress={props.onNo}>{t.common.cancel}</Button>
        </div>
      </>
    </Dialog>
  );
}

/** A Unix time in seconds as a local date and time. */
export function when(seconds: number | null | undefined): string {
  return seconds ? new Date(seconds * 1000).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium' }) : t.common.none;
}

/** What {@link useAction} gives a page. */
export interface Action {
  /** the last action's refusal, `''` while none */
  error: string;
  /** the last action's outcome (its text), `''` while none */
  status: string;
  /** true while an action runs, and while the reads it made stale are fetched again */
  busy: boolean;
  /** runs `action` (a TanStack Query mutation): busy meanwhile, then its result (the outcome's text) in `status` or its refusal in `error` */
  run(action: () => Promise<string>): void;
}

/**
 * A page's runner of server actions (save, revoke, delete, …), a TanStack Query mutation. After
 * an action that succeeded, every cached read is marked stale and the ones on screen are fetched
 * again (the action stays busy until they are), so the page shows the server's state; a refusal
 * changes nothing and leaves the form as typed.
 * @param options.invalidate false for an action that reads only (a permission test): nothing is fetched again
 */
export function useAction(options: { invalidate?: boolean } = {}): Action {
  const client = useQueryClient();
  const m = useMutation<string, unknown, () => Promise<string>>({
    mutationFn: (action) => action(),
    onSuccess: () => (options.invalidate === false ? undefined : client.invalidateQueries()),
  });
  return { error: m.error ? errorText(m.error) : '', status: m.data ?? '', busy: m.isPending, run: (action) => m.mutate(action) };
}

/** What {@link useLoad} and {@link useCall} give a page. */
export interface Loaded<T> {
  /** the answer, the previous one while the next loads (a page turn keeps the rows on screen), undefined before the first */
  data: T | undefined;
  /** the refusal of the last load, `''` while none */
  error: string;
  /** true while a load runs (the first one, or a fetch again after an action); the page's `aria-busy` */
  loading: boolean;
  /** loads again now */
  reload(): void;
}

/**
 * A cached read (TanStack Query's `useQuery`): loaded when first shown, again whenever `key`
 * changes, after any action (see {@link useAction}) and when the page is shown again (the cached
 * answer is shown meanwhile). Failed reads are not retried: the refusal is shown at once.
 * @param key the cache key: the operation's name and its request
 */
export function useLoad<T>(key: QueryKey, load: () => Promise<T>): Loaded<T> {
  const q = useQuery({ queryKey: key, queryFn: load, placeholderData: keepPreviousData });
  return { data: q.data, error: q.error ? errorText(q.error) : '', loading: q.isFetching, reload: () => void q.refetch() };
}

/** {@link useLoad} of one operation of the typed client: `api.call(op, body)`, cached under `[op, body]`. */
export function useCall<O extends AdminOperation>(op: O, body: Req<O>): Loaded<Res<O>> {
  const { api } = useConsole();
  return useLoad<Res<O>>([op, body], () => api.call(op, body));
}

/**
 * A list read by continuation tokens (the relationship engine's tuples and model versions), a
 * TanStack Query infinite query: the pages read so far, flattened, and `more()` to read the next.
 * @param key the cache key: the operation's name and its filters
 * @param read one page from `token` (`null` for the first): its rows and the next token (empty or null at the end)
 */
export function usePages<T>(key: QueryKey, read: (token: string | null) => Promise<{ rows: T[]; token: string | null | undefined }>): Loaded<T[]> & { hasMore: boolean; more(): void } {
  const q = useInfiniteQuery({
    queryKey: key,
    queryFn: ({ pageParam }) => read(pageParam),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.token || undefined,
    // new filters keep the rows on screen until their answer replaces them, as useLoad does
    placeholderData: keepPreviousData,
  });
  return {
    data: q.data?.pages.flatMap((p) => p.rows), error: q.error ? errorText(q.error) : '', loading: q.isFetching,
    reload: () => void q.refetch(), hasMore: q.hasNextPage, more: () => void q.fetchNextPage(),
  };
}
