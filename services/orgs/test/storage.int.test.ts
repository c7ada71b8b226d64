/** @module storage.int.test: the MikroORM OrgsStore on the machine's PostgreSQL and MariaDB (fresh database each). */
import type { DatabaseType } from '@gatehouse/db';
import { describeOrgsStore } from '../src/storage/ports.suite.ts';
import { openScratchOrgsStore } from '../src/storage/mikro/scratch.ts';

for (const type of ['postgres', 'mariadb'] as DatabaseType[]) {
  describeOrgsStore(`MikroORM on ${type}`, (clock) => openScratchOrgsStore(type, clock));
}
