/**
 * @module orgs/storage/mikro/unique
 * The one way the orgs stores turn a unique-index refusal into an answer: SCIM's, SSO's and the SAML IdP's
 * inserts and updates report "taken" as false instead of throwing.
 */
import { UniqueConstraintViolationException } from '@mikro-orm/core';

/** Runs an insert or update; false when a unique index refused it (other errors are thrown). */
export async function unlessDuplicate(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) return false;
    throw err;
  }
}
