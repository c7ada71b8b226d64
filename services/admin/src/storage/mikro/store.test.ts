/** @module mikro/store.test: the MikroORM AdminStore on SQLite passes the conformance suite. */
import { describeAdminStore } from '../ports.suite.ts';
import { openScratchAdminStore } from './scratch.ts';

describeAdminStore('MikroORM on sqlite', (clock) => openScratchAdminStore('sqlite', clock));
