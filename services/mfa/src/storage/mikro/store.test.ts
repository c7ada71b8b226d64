/** @module mikro/store.test: the MikroORM MfaStore on SQLite passes the conformance suite. */
import { describeMfaStore } from '../ports.suite.ts';
import { describePasskeyStore } from '../passkeys.suite.ts';
import { openScratchMfaStore } from './scratch.ts';

describeMfaStore('MikroORM on sqlite', (clock) => openScratchMfaStore('sqlite', clock));
describePasskeyStore('MikroORM on sqlite', (clock) => openScratchMfaStore('sqlite', clock));
