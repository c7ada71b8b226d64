/** @module test/support/http Raw HTTP helpers for edge tests (status, headers and parsed body in one value). */

export interface RawAnswer {
  status: number;
  headers: Headers;
  /** parsed JSON, or the text when the body is not JSON */
  body: any;
}

/** fetch() that always reads the body (JSON when it parses, else text). */
export async function raw(url: string, init: RequestInit = {}): Promise<RawAnswer> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try { body = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, headers: res.headers, body };
}

/** POST a JSON (or raw string) body with the given headers. */
export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return raw(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** POST /graphql with `{query, variables}`. */
export function gql(url: string, query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = { origin: url }): Promise<RawAnswer> {
  return postJson(`${url}/graphql`, { query, variables }, headers);
}
