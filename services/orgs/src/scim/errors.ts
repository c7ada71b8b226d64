/**
 * @module orgs/scim/errors
 * SCIM error responses (RFC 7644 §3.12; behaviour.md §6.4 "Errors"): the body
 * `{schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: "<http status>", scimType?, detail}`.
 */

export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** RFC 7644 §3.12 Table 9 `scimType` values the server emits. */
export type ScimType = 'invalidFilter' | 'invalidSyntax' | 'invalidValue' | 'uniqueness' | 'invalidPath' | 'noTarget' | 'mutability' | 'tooMany';

/** A SCIM failure: thrown by the SCIM domain, turned into the RFC 7644 §3.12 body by the server. */
export class ScimError extends Error {
  readonly status: number;
  readonly detail: string;
  readonly scimType: ScimType | undefined;

  constructor(status: number, detail: string, scimType?: ScimType) {
    super(detail);
    this.name = 'ScimError';
    this.status = status;
    this.detail = detail;
    this.scimType = scimType;
  }

  /** The RFC 7644 §3.12 JSON body. */
  body(): Record<string, unknown> {
    return { schemas: [ERROR_SCHEMA], status: String(this.status), ...(this.scimType ? { scimType: this.scimType } : {}), detail: this.detail };
  }
}

/** 400 with `scimType`. */
export const badRequest = (scimType: ScimType, detail: string): ScimError => new ScimError(400, detail, scimType);
/** 404 `resource not found` (also for another org's ids, behaviour.md §6.4). */
export const notFound = (): ScimError => new ScimError(404, 'resource not found');
/** 409 `uniqueness`. */
export const conflict = (detail: string): ScimError => new ScimError(409, detail, 'uniqueness');
/** 401 `authentication failed` (missing, wrong or rotated token; disabled endpoint or org). */
export const authFailed = (): ScimError => new ScimError(401, 'authentication failed');
