/** @module mikro/store.test: the MikroORM OrgsStore on SQLite passes the conformance suite. */
import { describeOrgsStore } from '../ports.suite.ts';
import { openScratchOrgsStore } from './scratch.ts';

describeOrgsStore('MikroORM on sqlite', (clock) => openScratchOrgsStore('sqlite', clock));
