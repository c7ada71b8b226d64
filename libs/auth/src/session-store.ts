/**
 * @module @gatehouse/auth/session-store
 * The browser/token session record (behaviour.md §2.1) and the store every service reads to decide
 * whether an access token's session is still alive. authn writes it; the others only read.
 */

/** One session. Times are Unix seconds. */
export interface SessionRecord {
  /** session id; the access token's `nonce` */
  id: string;
  userId: string;
  /** sha256 hex of the 256-bit opaque cookie handle; the handle itself is never stored */
  handleHash: string;
  /** `basic_auth`, `mobile_basic_auth`, `magic_link_login`, ... */
  loginMethod: string;
  roles: string[];
  scope: string[];
  authTime: number;
  expiresAt: number;
  /** `jti` of the session's current refresh token, when one was issued */
  refreshTokenId?: string | null;
  /**
   * RFC 8176 `amr` values of a second factor proven when the session was opened (behaviour.md §2.1:
   * `otp`, `sms`, `hwk`, ...; the ID token adds `mfa`), kept so a refresh carries them; absent or null: none
   */
  amr?: string[] | null;
  /**
   * issue 18 (refresh grant, behaviour.md §2.2): the retired predecessor of `refreshTokenId` and
   * when it was retired (Unix s), for the 10 s double-submit exception; absent or null: none
   */
  previousRefreshTokenId?: string | null;
  refreshRotatedAt?: number | null;
  /**
   * issue 18: the OAuth client the session's tokens were issued to (their `aud`); absent or null:
   * the server's own client (`--client-id`). For a client_credentials session, `userId` is the
   * client's id and `loginMethod` is `client_credentials`.
   */
  clientId?: string | null;
  /**
   * issue 34 §6: the browser's sign-on session an OAuth grant was made in (the ID token's and the
   * logout token's `sid`, OIDC Back-Channel Logout 1.0 §2.4); absent or null: the session is its own
   * sign-on session (a login of the browser itself, a grant made without one)
   */
  sid?: string | null;
  createdAt: number;
  /**
   * issue 33: the `User-Agent` header (at most {@link SESSION_USER_AGENT_MAX_CHARS} characters) and the
   * client IP address of the request that opened the session, shown in the user's session list;
   * absent or null: unknown
   */
  userAgent?: string | null;
  ipAddress?: string | null;
  /**
   * issue 33: Unix s of the last authenticated request, written by {@link SessionStore.touch} at most
   * once per {@link SESSION_TOUCH_INTERVAL_SECONDS}; absent or null: not used since `createdAt`
   */
  lastUsedAt?: number | null;
}

/** Longest `User-Agent` kept on a session record, in characters (longer values are cut). */
export const SESSION_USER_AGENT_MAX_CHARS = 512;
/** A session's `lastUsedAt` is written at most this often (seconds), so a request costs no write. */
export const SESSION_TOUCH_INTERVAL_SECONDS = 60;

export interface SessionStore {
  create(s: SessionRecord): Promise<void>;
  /** The session, or null when absent or expired. */
  get(id: string): Promise<SessionRecord | null>;
  /** The session whose handle hashes to `hash`, or null when absent or expired. */
  findByHandleHash(hash: string): Promise<SessionRecord | null>;
  delete(id: string): Promise<void>;
  /** Deletes every session of the user except `exceptId`; returns how many were deleted. */
  deleteAllForUser(userId: string, exceptId?: string): Promise<number>;
  /**
   * Deletes every session whose tokens were issued to the OAuth client `clientId` (`clientId` of the
   * record; issue 18, behaviour.md §5.8 "deactivation kills live tokens"); returns how many were deleted.
   * With `userId`, only that user's sessions with the client (issue 34: a revoked consent grant).
   */
  deleteAllForClient(clientId: string, userId?: string): Promise<number>;
  /** Replaces a session record (same id). Leaves `lastUsedAt` as stored (only `touch` writes it). */
  update(s: SessionRecord): Promise<void>;
  /**
   * issue 33: the user's live (unexpired) sessions, in no particular order; never served from a
   * cache. Includes client_credentials sessions only when `userId` is a client's id.
   */
  listForUser(userId: string): Promise<SessionRecord[]>;
  /**
   * issue 33: records that session `s` served a request at `at` (Unix s), writing `lastUsedAt` only;
   * a session that is gone stays gone (no write resurrects it). Callers throttle (the authenticator
   * writes at most once per {@link SESSION_TOUCH_INTERVAL_SECONDS} per session).
   */
  touch(s: Pick<SessionRecord, 'id' | 'userId' | 'expiresAt'>, at: number): Promise<void>;
}

const copy = (s: SessionRecord): SessionRecord => ({ ...s, roles: [...s.roles], scope: [...s.scope], ...(s.amr ? { amr: [...s.amr] } : {}) });

/**
 * In-memory store for unit tests and single-process use.
 * @param clock Unix seconds; expired sessions read as absent
 */
export function createMemorySessionStore(options: { clock?: () => number } = {}): SessionStore & { size(): number } {
  const clock = options.clock ?? (() => Math.floor(Date.now() / 1000));
  const byId = new Map<string, SessionRecord>();
  const live = (s: SessionRecord | undefined): SessionRecord | null => (s && s.expiresAt > clock() ? copy(s) : null);
  return {
    async create(s) {
      byId.set(s.id, copy(s));
    },
    async get(id) {
      return live(byId.get(id));
    },
    async findByHandleHash(hash) {
      for (const s of byId.values()) if (s.handleHash === hash) return live(s);
      return null;
    },
    async delete(id) {
      byId.delete(id);
    },
    async deleteAllForUser(userId, exceptId) {
      let n = 0;
      for (const s of [...byId.values()]) {
        if (s.userId === userId && s.id !== exceptId) {
          byId.delete(s.id);
          n++;
        }
      }
      return n;
    },
    async deleteAllForClient(clientId, userId) {
      let n = 0;
      for (const s of [...byId.values()]) {
        if (s.clientId === clientId && (userId === undefined || s.userId === userId)) {
          byId.delete(s.id);
          n++;
        }
      }
      return n;
    },
    async update(s) {
      const old = byId.get(s.id);
      if (!old) return;
      const { lastUsedAt: _ignored, ...next } = copy(s);
      byId.set(s.id, old.lastUsedAt != null ? { ...next, lastUsedAt: old.lastUsedAt } : next);
    },
    async listForUser(userId) {
      return [...byId.values()].filter((s) => s.userId === userId).map(live).filter((s): s is SessionRecord => s !== null);
    },
    async touch(s, at) {
      const old = byId.get(s.id);
      if (old) old.lastUsedAt = at;
    },
    size: () => byId.size,
  };
}
