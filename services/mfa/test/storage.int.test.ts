/** @module storage.int.test: the MikroORM MfaStore on the machine's PostgreSQL and MariaDB (fresh database each). */
import type { DatabaseType } from '@gatehouse/db';
import { describeMfaStore } from '../src/storage/ports.suite.ts';
import { describePasskeyStore } from '../src/storage/passkeys.suite.ts';
import { openScratchMfaStore } from '../src/storage/mikro/scratch.ts';

for (const type of ['postgres', 'mariadb'] as DatabaseType[]) {
  describeMfaStore(`MikroORM on ${type}`, (clock) => openScratchMfaStore(type, clock));
  describePasskeyStore(`MikroORM on ${type}`, (clock) => openScratchMfaStore(type, clock));
}
