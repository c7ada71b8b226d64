import { createMemoryAuthnStorage } from './memory.ts';
import { runAuthnStorageSuite } from './ports.suite.ts';

runAuthnStorageSuite('memory', async () => {
  const s = createMemoryAuthnStorage();
  return { users: s.users, lockout: s.lockout, publishedEvents: async () => s.published };
});
