/**
 * @module login/recovery-codes
 * The recovery codes after TOTP enrolment (issue 33 §3; behaviour.md §4.5: 10 single-use codes, shown
 * once): every code in full, a copy button (the Clipboard API), a download link (a `data:` URL with the
 * `download` attribute, so no script runs outside the bundle) and the confirmation "I have saved these
 * codes" that unlocks Continue.
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

/** The text copied and downloaded: one code per line, after a line naming the account's organization. */
export const recoveryCodesText = (organizationName: string, codes: readonly string[]): string =>
  `${organizationName} recovery codes (each works once)\n${codes.join('\n')}\n`;

export function RecoveryCodes(p: {
  codes: readonly string[]; organizationName: string; busy: boolean;
  setStatus: (s: string) => void; setError: (s: string) => void; onContinue: () => void;
}): JSX.Element {
  const [saved, setSaved] = useState(false);
  const text = recoveryCodesText(p.organizationName, p.codes);
  const copy = async (): Promise<void> => {
    p.setError('');
    try {
      await navigator.clipboard.writeText(text);
      p.setStatus('The recovery codes were copied.');
    } catch {
      p.setError('The codes could not be copied here: download them or write them down.');
    }
  };
  return (
    <>
      <p>Your authenticator app is set up. If you lose it, each of these codes lets you sign in once. Save them somewhere safe now: they are not shown again.</p>
      <ol class="codes recovery" aria-label="Recovery codes">{p.codes.map((c) => <li key={c}><code>{c}</code></li>)}</ol>
      <button type="button" class="secondary" onClick={() => { void copy(); }}>Copy the codes</button>
      <a class="button secondary" href={`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`} download="recovery-codes.txt">Download the codes</a>
      <div class="check">
        <input id="f-saved" type="checkbox" checked={saved} onChange={(e) => setSaved(e.currentTarget.checked)} />
        <label for="f-saved">I have saved these codes</label>
      </div>
      <button type="button" disabled={!saved || p.busy} onClick={p.onContinue}>Continue</button>
    </>
  );
}
