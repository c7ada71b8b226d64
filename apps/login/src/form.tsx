/**
 * @module login/form
 * The page's form parts: a labelled field (its hint and the alert region named by
 * `aria-describedby`), a form with one submit button, and reading a form's values.
 */
import type { ComponentChildren, JSX } from 'preact';

/** The named values of the form `#<id>`. */
export function formValues(id: string): Record<string, string> {
  const form = document.getElementById(id) as HTMLFormElement | null;
  const out: Record<string, string> = {};
  if (!form) return out;
  for (const [k, v] of new FormData(form)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** A form `#<id>` with its fields and one submit button (disabled while busy); submitting calls `onSubmit`. */
export function Form(p: { id: string; submit: string; busy: boolean; onSubmit: () => void; children: ComponentChildren }): JSX.Element {
  return (
    <form id={p.id} noValidate={false} onSubmit={(e) => { e.preventDefault(); p.onSubmit(); }}>
      {p.children}
      <button type="submit" disabled={p.busy}>{p.submit}</button>
    </form>
  );
}

export interface FieldProps {
  name: string;
  label: string;
  type?: string;
  autoComplete?: string;
  inputMode?: 'numeric' | 'text';
  required?: boolean;
  /** the initial value (a code from the link the user followed) */
  defaultValue?: string;
  hint?: string;
  /** the current error: a non-empty one marks the field invalid and points at the alert */
  error?: string;
}

/** A labelled input; an error marks it `aria-invalid` and points `aria-describedby` at the alert region. */
export function Field(p: FieldProps): JSX.Element {
  const id = `f-${p.name}`;
  const described = [p.hint ? `${id}-hint` : '', p.error ? 'form-error' : ''].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{p.label}</label>
      <input id={id} name={p.name} type={p.type ?? 'text'} autoComplete={p.autoComplete} inputMode={p.inputMode} required={p.required} defaultValue={p.defaultValue}
        aria-invalid={p.error ? 'true' : undefined} aria-describedby={described || undefined} />
      {p.hint && <p class="hint" id={`${id}-hint`}>{p.hint}</p>}
    </div>
  );
}
