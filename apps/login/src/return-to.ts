/**
 * @module login/return-to
 * Where the page may send the browser after a sign-in (issue 18 item 5, the `/authorize` contract):
 * `return_to` is honoured only when it is a same-origin path under `<base>/authorize`, or the SAML
 * IdP's sign-on endpoint `<base>/oauth/saml/<org>/idp/sso` (issue 20), or the device verification page
 * `<base>/app/device` (RFC 8628, issue 34 §5) or the account console `<base>/app/account` (issue 33 §2), never an absolute URL, a
 * protocol-relative `//host` or a backslash trick (RFC 9700 §4.11: no open redirect).
 */

/**
 * The path and query to navigate to, or null when `raw` is not acceptable.
 * @param raw the `return_to` query parameter as received (already URL-decoded), or null
 * @param origin the page's origin (`location.origin`)
 * @param basePath the path prefix of `--url` (`''` or e.g. `/auth`), no trailing slash
 */
export function safeReturnTo(raw: string | null, origin: string, basePath: string): string | null {
  if (raw === null || raw === '' || raw.length > 8192) return null;
  // a path: one leading slash, no scheme, no `//host`, no backslashes or control characters
  if (!raw.startsWith('/') || raw.startsWith('//') || raw.includes('\\')) return null;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return null;
  }
  let url: URL;
  try {
    url = new URL(raw, origin);
  } catch {
    return null;
  }
  if (url.origin !== origin) return null;
  const authorize = `${basePath}/authorize`;
  const samlIdpSso = url.pathname.startsWith(`${basePath}/oauth/saml/`) && /^\/oauth\/saml\/[^/]+\/idp\/sso$/.test(url.pathname.slice(basePath.length));
  // the device page and the account console (issue 33 §2) send a signed-out visitor to sign in first
  const device = url.pathname === `${basePath}/app/device` || url.pathname === `${basePath}/app/account`;
  if (url.pathname !== authorize && !url.pathname.startsWith(`${authorize}/`) && !samlIdpSso && !device) return null;
  return `${url.pathname}${url.search}`;
}
