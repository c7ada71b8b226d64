/** @module @gatehouse/authn/storage/memory-oauth.test — the in-memory OAuthStore passes the conformance suite. */
import { createMemoryOAuthStore } from './memory-oauth.ts';
import { runOAuthStoreSuite } from './oauth.suite.ts';

runOAuthStoreSuite('memory', async () => createMemoryOAuthStore());
