/**
 * @module @gatehouse/authn/storage/mikro/claims
 * Email and phone uniqueness on MongoDB (issue 32 §4). The users collection has no unique index on
 * `email` or `phone_number` (the contract keeps uniqueness in the application), and MongoDB has no
 * gap lock or advisory lock to serialise two signups of one address, so each normalised address and
 * number is claimed by a document of `authn_identifier_claims` whose `_id` is `email:<address>` or
 * `phone:<E.164 number>`: the unique `_id` lets one insert win. The claim is written before the user,
 * outside any MongoDB transaction (a claim inserted inside one would conflict, not wait), and:
 * - settled (`user_id` recorded) once the unit of work that took it wrote a user with the value, or
 *   released if it wrote none or failed;
 * - released when its user is deleted or changes the value;
 * - taken over when no user stores the value any more and the claim is settled (its release was
 *   lost), or was never settled within {@link CLAIM_STALE_MS} (a crash between claim and user insert).
 * A claimer that finds the value claimed by a unit of work still running waits for it (polling), like
 * a lock; when a user stores the value it returns `held` and the caller's uniqueness check refuses.
 * Every caller claims the email before the phone number, so two units of work never wait for each
 * other in a cycle. A unit of work is assumed to finish within {@link CLAIM_STALE_MS} (authn's take
 * milliseconds): one that ran longer could find its unsettled claim taken over.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from '@gatehouse/db';

/** The collection of the claims. */
export const CLAIMS_COLLECTION = 'authn_identifier_claims';
/** Milliseconds after which a claim no user stores is abandoned and may be taken over. */
export const CLAIM_STALE_MS = 10_000;
const POLL_MS = 10;

export type IdentifierKind = 'email' | 'phone';

interface ClaimDoc {
  _id: string;
  /** the unit of work that took the claim */
  owner: string;
  /** the user that stores the value, once the claim is settled */
  user_id: string | null;
  /** Unix milliseconds */
  claimed_at: number;
}

interface Collection {
  insertOne(doc: ClaimDoc): Promise<unknown>;
  findOne(filter: object): Promise<ClaimDoc | null>;
  updateOne(filter: object, update: object): Promise<{ matchedCount: number }>;
  deleteOne(filter: object): Promise<unknown>;
}

/** `email:<address>` / `phone:<number>`: the claim's `_id`. */
export const claimId = (kind: IdentifierKind, value: string): string => `${kind}:${value}`;

const isDuplicateKey = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === 11000;

/**
 * The claims one unit of work takes, settles and releases. `holder(kind, value)` reads, outside the
 * unit of work, the id of the user that stores the value now (null when none does).
 */
export class IdentifierClaims {
  /** this unit of work's id, the `owner` of its claims */
  readonly owner = randomUUID();
  private readonly taken = new Set<string>();
  /** claim id → the user this unit of work wrote with the value */
  private readonly written = new Map<string, string>();
  private readonly released: { id: string; userId: string }[] = [];

  private readonly db: Database;
  private readonly holder: (kind: IdentifierKind, value: string) => Promise<string | null>;
  /** Unix milliseconds */
  private readonly nowMs: () => number;

  constructor(db: Database, holder: (kind: IdentifierKind, value: string) => Promise<string | null>, nowMs: () => number = Date.now) {
    this.db = db;
    this.holder = holder;
    this.nowMs = nowMs;
  }

  private collection(): Collection {
    return (this.db.fork() as unknown as { getCollection(name: string): Collection }).getCollection(CLAIMS_COLLECTION);
  }

  /**
   * Claims `value` for this unit of work, waiting while another unit of work that claimed it is
   * running. Resolves `claimed` (this unit of work may store the value) or `held` with the id of the
   * user that stores it.
   * @throws the driver's error when MongoDB cannot be reached
   */
  async claim(kind: IdentifierKind, value: string): Promise<{ state: 'claimed' } | { state: 'held'; userId: string }> {
    const id = claimId(kind, value);
    if (this.taken.has(id)) return { state: 'claimed' };
    const c = this.collection();
    for (;;) {
      try {
        await c.insertOne({ _id: id, owner: this.owner, user_id: null, claimed_at: this.nowMs() });
        this.taken.add(id);
        return { state: 'claimed' };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const current = await c.findOne({ _id: id });
      if (!current) continue;
      const userId = await this.holder(kind, value);
      if (userId !== null) return { state: 'held', userId };
      // no user stores the value: a settled claim lost its release; an unsettled one is either
      // running (wait for it) or was abandoned by a crash (take it over once stale)
      if (current.user_id !== null || this.nowMs() - current.claimed_at >= CLAIM_STALE_MS) {
        const r = await c.updateOne({ _id: id, owner: current.owner, user_id: current.user_id }, { $set: { owner: this.owner, user_id: null, claimed_at: this.nowMs() } });
        if (r.matchedCount === 1) {
          this.taken.add(id);
          return { state: 'claimed' };
        }
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS + Math.random() * POLL_MS));
    }
  }

  /** Records that this unit of work writes user `userId` with `value` (its claim is settled after commit). */
  wrote(kind: IdentifierKind, value: string, userId: string): void {
    this.written.set(claimId(kind, value), userId);
  }

  /** Releases, after commit, the claim of `value` settled for `userId` (the user is deleted or changed it). */
  release(kind: IdentifierKind, value: string, userId: string): void {
    this.released.push({ id: claimId(kind, value), userId });
  }

  /**
   * After the unit of work committed: settles each claim it took on the user it wrote, releases the
   * ones it did not use and the values its users gave up. Best effort: a step that fails leaves a claim
   * that the takeover rule of {@link claim} resolves.
   */
  async committed(): Promise<void> {
    const c = this.collection();
    await Promise.allSettled([
      ...[...this.taken].map((id) => {
        const userId = this.written.get(id);
        return userId !== undefined
          ? c.updateOne({ _id: id, owner: this.owner }, { $set: { user_id: userId } })
          : c.deleteOne({ _id: id, owner: this.owner });
      }),
      ...this.released.map(({ id, userId }) => c.deleteOne({ _id: id, user_id: userId })),
    ]);
  }

  /** After the unit of work failed: releases every claim it took. */
  async failed(): Promise<void> {
    const c = this.collection();
    await Promise.allSettled([...this.taken].map((id) => c.deleteOne({ _id: id, owner: this.owner })));
  }
}
