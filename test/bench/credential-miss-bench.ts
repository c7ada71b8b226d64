/**
 * @module bench/credential-miss-bench
 * `npx node test/bench/credential-miss-bench.ts`: the database reads of a credential-cache miss (issue 22
 * §1: `SessionStore.get` + `UserRepository.findById`), through MikroORM (`prepare` removed, the MongoDB
 * path) and through the driver's prepared statements, on SQLite, PostgreSQL and MariaDB (scratch
 * databases on the machine's servers). 2000 misses, 8 concurrent callers, 5 interleaved rounds after one
 * warm-up round each; prints the median wall time and this process's CPU per miss. Not a test: the
 * figures depend on the machine and its load.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { createScratchDatabase, openDatabase, type DatabaseType } from '@gatehouse/db';
import type { SessionStore } from '@gatehouse/auth';
import { createLogger } from '@gatehouse/observability';
import type { UserRepository } from '../../services/authn/src/storage/ports.ts';
import { authnSchema, createMikroSessionStore, createMikroUserRepository } from '../../services/authn/src/storage/mikro/index.ts';

const MISSES = 2000;
const CALLERS = 8;
const ROUNDS = 5;

/** Wall ms of MISSES misses and this process's CPU µs per miss. */
async function misses(sessions: SessionStore, users: UserRepository, sessionId: string, userId: string): Promise<{ ms: number; cpuUs: number }> {
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  await Promise.all(Array.from({ length: CALLERS }, async () => {
    for (let i = 0; i < MISSES / CALLERS; i++) {
      await sessions.get(sessionId);
      await users.findById(userId);
    }
  }));
  const cpu = process.cpuUsage(c0);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, cpuUs: (cpu.user + cpu.system) / MISSES };
}

const median = (a: number[]): number => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;

console.log(`machine: ${os.cpus().length} cores, node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
for (const type of ['sqlite', 'postgres', 'mariadb'] as DatabaseType[]) {
  const scratch = await createScratchDatabase(type);
  const db = await openDatabase(scratch.options, authnSchema, { logger: createLogger('silent') });
  try {
    const orm = { ...db, prepare: undefined };
    const paths = {
      orm: { sessions: createMikroSessionStore(orm), users: createMikroUserRepository(orm) },
      prepared: { sessions: createMikroSessionStore(db), users: createMikroUserRepository(db) },
    };
    const userId = randomUUID();
    const sessionId = randomUUID();
    await paths.prepared.users.transaction(async (tx) => tx.users.create({
      id: userId, email: 'bench@example.com', emailVerifiedAt: 1_700_000_000, passwordHash: 'x', signupMethods: 'basic_auth', givenName: 'Ada', familyName: 'Lovelace',
      middleName: null, nickname: null, gender: null, birthdate: null, picture: null, phoneNumber: null, phoneNumberVerifiedAt: null, roles: ['user'],
      createdAt: 1_700_000_000, updatedAt: 1_700_000_001, revokedTimestamp: null, deactivatedAt: null, isMultiFactorAuthEnabled: false,
      hasSkippedMfaSetupAt: null, mfaLockedAt: null, appData: { plan: 'pro' },
    }));
    await paths.prepared.sessions.create({ id: sessionId, userId, handleHash: 'a'.repeat(64), loginMethod: 'basic_auth', roles: ['user'], scope: ['openid'], authTime: 1, expiresAt: 4_000_000_000, refreshTokenId: null, createdAt: 1 });
    for (const p of Object.values(paths)) await misses(p.sessions, p.users, sessionId, userId);
    const runs = { orm: [] as Array<{ ms: number; cpuUs: number }>, prepared: [] as Array<{ ms: number; cpuUs: number }> };
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of ['orm', 'prepared'] as const) runs[k].push(await misses(paths[k].sessions, paths[k].users, sessionId, userId));
    }
    const line = (k: 'orm' | 'prepared'): string => `${median(runs[k].map((x) => x.ms)).toFixed(0)} ms, ${median(runs[k].map((x) => x.cpuUs)).toFixed(0)} µs CPU/miss`;
    console.log(`${type.padEnd(8)} ${MISSES} misses: MikroORM ${line('orm')}; prepared ${line('prepared')}`);
  } finally {
    await db.close();
    await scratch.drop();
  }
}
console.log(`load average after: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
