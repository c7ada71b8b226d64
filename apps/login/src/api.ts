/**
 * @module login/api
 * The page's only way to the server: the public `/v1` REST routes (service-spec §4), same-origin
 * `fetch` with the browser's cookies (`cookie_session`, `mfa`: behaviour.md §2.4). A POST from the
 * page carries the `Origin` header the gateway's CSRF check wants (§2.5).
 */

/** AuthResponse (service-spec §2; the MFA fields of behaviour.md §4.1). */
export interface AuthResponse {
  message: string;
  access_token?: string | null;
  user?: User | null;
  should_show_email_otp_screen?: boolean;
  should_show_mobile_otp_screen?: boolean;
  should_show_totp_screen?: boolean;
  should_offer_webauthn_mfa_verify?: boolean;
  should_offer_webauthn_mfa_setup?: boolean;
  should_offer_email_otp_mfa_setup?: boolean;
  should_offer_sms_otp_mfa_setup?: boolean;
  authenticator_scanner_image?: string | null;
  authenticator_secret?: string | null;
  authenticator_recovery_codes?: string[];
}

export interface User {
  id: string;
  email?: string | null;
  phone_number?: string | null;
  given_name?: string | null;
}

/** Meta (behaviour.md §5.2): every field non-null. */
export type Meta = Record<string, boolean | string>;

/** A `{code, message}` error answer (behaviour.md §0.2), or a network failure (`status` 0). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** What `/oauth/device_verification` answers for a user code (RFC 8628 §3.3: the consent screen of `/app/device`). */
export interface DeviceConsent {
  consent_ticket: string;
  client_id: string;
  client_name: string;
  scopes: { scope: string; words: string }[];
  user_code: string;
}

/** A client of `<basePath>/v1` (and of the OAuth endpoints the page itself calls). */
export interface Api {
  /** POST `/v1/<name>` with a JSON body; resolves with the JSON answer, rejects with {@link ApiError} */
  post<T = { message: string }>(name: string, body?: Record<string, unknown>): Promise<T>;
  /** GET `/v1/<name>` */
  get<T>(name: string): Promise<T>;
  /**
   * POST `/oauth/<name>` with a JSON body (the device verification calls); rejects with {@link ApiError}
   * whose `code` is the RFC 6749 §5.2 `error` and message its `error_description`
   */
  oauth<T>(name: string, body: Record<string, unknown>): Promise<T>;
}

/**
 * One same-origin JSON call with the browser's cookies (also used by the admin console, apps/dashboard).
 * @param url the path to call
 * @param body sent as JSON on a POST; ignored on a GET
 * @returns the JSON answer (null for an empty body)
 * @throws ApiError with the answer's `{code, message}` (or an OAuth `{error, error_description}`);
 *   status 0 `unavailable` when the server cannot be reached
 */
export async function fetchJson<T>(url: string, method: 'GET' | 'POST', body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      credentials: 'same-origin',
      headers: method === 'POST' ? { 'content-type': 'application/json', accept: 'application/json' } : { accept: 'application/json' },
      body: method === 'POST' ? JSON.stringify(body ?? {}) : undefined,
    });
  } catch {
    throw new ApiError(0, 'unavailable', 'The server could not be reached. Check your connection and try again.');
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) {
    const e = (json ?? {}) as { code?: string; message?: string; error?: string; error_description?: string };
    throw new ApiError(res.status, e.code ?? e.error ?? 'unknown', e.message ?? e.error_description ?? `The server answered ${res.status}.`);
  }
  return json as T;
}

/** @param basePath the path prefix of `--url`, `''` for none */
export function createApi(basePath: string): Api {
  return {
    post: (name, body) => fetchJson(`${basePath}/v1/${name}`, 'POST', body),
    get: (name) => fetchJson(`${basePath}/v1/${name}`, 'GET'),
    oauth: (name, body) => fetchJson(`${basePath}/oauth/${name}`, 'POST', body),
  };
}
