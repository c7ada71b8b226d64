/**
 * @module orgs/samlidp/storage/retention.test
 * Issue 31: the SAML IdP's Single Logout retention rules on SQLite, PostgreSQL, MariaDB and MongoDB
 * (FerretDB), two sweepers at once: session participants of expired sessions and expired waiting logouts
 * go once each; live ones stay.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { describeRetention } from '@gatehouse/db/retention-suite';
import { orgsSchema } from '../../storage/mikro/schema.ts';
import { SAML_IDP_RETENTION } from './retention.ts';
import { samlIdpEntities, samlIdpMigrations } from './schema.ts';

const schema = { ...orgsSchema, entities: [...orgsSchema.entities, ...samlIdpEntities], migrations: [...orgsSchema.migrations, ...samlIdpMigrations] };
const participant = (expiresAt: number): Record<string, unknown> => ({
  id: randomBytes(32).toString('hex'), org_id: randomUUID(), session_id: randomUUID(), sp_id: randomUUID(), name_id: 'ada@example.com',
  name_id_format: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress', session_index: `_${randomBytes(20).toString('hex')}`, issued_at: expiresAt - 3600, expires_at: expiresAt,
});
const logout = (expiresAt: number): Record<string, unknown> => ({ id: `_${randomBytes(20).toString('hex')}`, org_id: randomUUID(), data: '{}', expires_at: expiresAt });

describeRetention(schema, SAML_IDP_RETENTION, {
  orgs_saml_idp_participants: { expired: (i, now) => participant(now - 1 - i), live: (i, now) => participant(now + 3600 + i) },
  orgs_saml_idp_logouts: { expired: (i, now) => logout(now - 1 - i), live: (i, now) => logout(now + 300 + i) },
});
