/**
 * @module services/registry
 * The one list of Gatehouse's services (issue 14 §4). All-in-one builds them in this order (authn
 * before the services that check callers against its session store), `gatehouse <name>` runs one of
 * them, the gateway routes to those with a public API, the supergraph composes their subgraphs, and
 * the chart's service list is generated from it (scripts/gen-chart-services.ts). Adding a service is
 * its folder under services/ and one line here.
 */
import { adminModule } from '@gatehouse/admin';
import { authnModule } from '@gatehouse/authn';
import { authzModule } from '@gatehouse/authz';
import { mfaModule } from '@gatehouse/mfa';
import { notificationsModule } from '@gatehouse/notifications';
import { orgsModule } from '@gatehouse/orgs';
import type { ServiceModule } from '@gatehouse/service';

export const SERVICES: readonly ServiceModule[] = Object.freeze([
  notificationsModule,
  authnModule,
  mfaModule,
  adminModule,
  orgsModule,
  authzModule,
]);
