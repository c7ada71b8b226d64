/** @module storage.int.test: the MikroORM AdminStore on the machine's PostgreSQL and MariaDB (fresh database each). */
import type { DatabaseType } from '@gatehouse/db';
import { describeAdminStore } from '../src/storage/ports.suite.ts';
import { openScratchAdminStore } from '../src/storage/mikro/scratch.ts';

for (const type of ['postgres', 'mariadb'] as DatabaseType[]) {
  describeAdminStore(`MikroORM on ${type}`, (clock) => openScratchAdminStore(type, clock));
}
