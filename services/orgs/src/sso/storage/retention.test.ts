/**
 * @module orgs/sso/storage/retention.test
 * The SSO retention rules on SQLite, PostgreSQL, MariaDB and MongoDB (FerretDB), two sweepers at once: expired pending
 * logins and replay-cache entries go once each; live ones stay.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { describeRetention } from '@gatehouse/db/retention-suite';
import { orgsSchema } from '../../storage/mikro/schema.ts';
import { SSO_RETENTION } from './retention.ts';
import { samlSpKeyMigration, samlSpKeyRotationMigration, ssoEntities, ssoMigration } from './schema.ts';

const schema = { ...orgsSchema, entities: [...orgsSchema.entities, ...ssoEntities], migrations: [...orgsSchema.migrations, ssoMigration, samlSpKeyMigration, samlSpKeyRotationMigration] };
const pending = (expiresAt: number): Record<string, unknown> => ({ id: randomBytes(24).toString('base64url'), org_id: randomUUID(), kind: 'saml', data: '{}', expires_at: expiresAt });
const assertion = (expiresAt: number): Record<string, unknown> => ({ id: randomBytes(32).toString('hex'), org_id: randomUUID(), expires_at: expiresAt });

describeRetention(schema, SSO_RETENTION, {
  orgs_sso_pending: { expired: (i, now) => pending(now - 1 - i), live: (i, now) => pending(now + 600 + i) },
  orgs_saml_assertions: { expired: (i, now) => assertion(now - 1 - i), live: (i, now) => assertion(now + 3600 + i) },
});
