/**
 * @module @gatehouse/authn/storage/mikro/admin-lists
 * The admin lists of authn's tables (behaviour.md §5.3, §10): users by case-insensitive substring,
 * and verification requests; both ordered by created_at desc then id, with the total of matches.
 */
import { raw } from '@mikro-orm/core';
import type { Database } from '@gatehouse/db';
import type { Page, PageRequest, UserRecord, VerificationRequestRecord } from '../ports.ts';
import { UserEntity, VerificationRequestEntity } from './entities.ts';
import { toRecord as toUser } from './users.ts';
import { toRecord as toVerification } from './verifications.ts';

type Row = Record<string, unknown>;

/** The columns `users.query` is matched against (behaviour.md §5.3). */
const SEARCHED = ['id', 'email', 'given_name', 'family_name', 'nickname'] as const;
const ORDER = { orderBy: [{ createdAt: 'desc' }, { id: 'asc' }] };

/** `%`, `_` and the escape character (`!`: a backslash means different things per dialect) are literal in a user's query. */
const likePattern = (q: string): string => `%${q.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;
const regexpOf = (q: string): RegExp => new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');

/** The filter of a user search on this database; `{}` for every user. */
function userFilter(db: Database, query: string | null): Row {
  if (!query) return {};
  if (db.type === 'mongodb') {
    const re = regexpOf(query);
    return { $or: [{ id: re }, { email: re }, { givenName: re }, { familyName: re }, { nickname: re }] };
  }
  const pattern = likePattern(query);
  const text = db.type === 'mysql' || db.type === 'mariadb' ? 'char' : 'text';
  // lower() on both sides: PostgreSQL's LIKE is case-sensitive, SQLite's and MySQL's are not; the
  // cast lets it take PostgreSQL's uuid id column
  return { $or: SEARCHED.map((col) => ({ [raw((alias: string) => `lower(cast(${alias}.${col} as ${text})) like ? escape '!'`, [pattern])]: [] })) };
}

export async function searchUsers(db: Database, query: string | null, page: PageRequest): Promise<Page<UserRecord>> {
  const em = db.fork();
  const [rows, total] = await em.findAndCount(UserEntity as never, userFilter(db, query) as never, { ...ORDER, offset: page.offset, limit: page.limit } as never);
  return { rows: (rows as Row[]).map(toUser), total };
}

export async function listVerificationRequests(db: Database, page: PageRequest): Promise<Page<VerificationRequestRecord>> {
  const em = db.fork();
  const [rows, total] = await em.findAndCount(VerificationRequestEntity as never, {} as never, { ...ORDER, offset: page.offset, limit: page.limit } as never);
  return { rows: (rows as Row[]).map(toVerification), total };
}
