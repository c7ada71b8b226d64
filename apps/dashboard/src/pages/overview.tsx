/**
 * @module dashboard/pages/overview
 * The overview: the server's version, environment, deployment mode (all-in-one or split) and event
 * bus, database and authorization engine, the enabled
 * features of AdminMeta (`GET /v1/admin/meta`), counts of users, clients and organizations (the
 * `total` of a one-row page of each list) and of relationship tuples (counted by reading pages, up to
 * a bound), and a link to the GraphQL playground, which the `service-admin` cookie opens.
 */
import type { JSX } from 'preact';
import type { Api, Res } from '../api.ts';
import { t } from '../strings.ts';
import { Messages, Title, useConsole, useLoad } from '../ui.tsx';

/** Tuples are counted by reading at most this many pages of 100. */
const TUPLE_PAGES = 10;

interface Counts { users: number; clients: number; organizations: number; tuples: number; tuplesMore: boolean }

/** The four counts; a list the deployment does not serve (authz off) counts as null. */
async function counts(api: Api, authz: boolean): Promise<Counts> {
  const one = { pagination: { page: 1, limit: 1 } };
  const [users, clients, orgs] = await Promise.all([api.call('users', one), api.call('clients', one), api.call('organizations', one)]);
  let tuples = 0;
  let more = false;
  if (authz) {
    let token: string | null | undefined;
    for (let i = 0; i < TUPLE_PAGES; i++) {
      const page = await api.call('fga/tuples/read', { page_size: 100, continuation_token: token ?? null });
      tuples += page.tuples.length;
      token = page.continuation_token;
      if (!token) break;
      if (i === TUPLE_PAGES - 1) more = true;
    }
  }
  return {
    users: users.pagination?.total ?? 0, clients: clients.pagination?.total ?? 0, organizations: orgs.pagination?.total ?? 0, tuples, tuplesMore: more,
  };
}

export function Overview(): JSX.Element {
  const { api, config } = useConsole();
  const { data, error, loading } = useLoad(['overview'], async (): Promise<{ meta: Res<'meta'>; counts: Counts }> => {
    const meta = await api.call('meta', {});
    return { meta, counts: await counts(api, meta.authorization_engine?.is_enabled === true) };
  });
  const meta = data?.meta;
  const features = Object.entries(t.overview.featureNames) as Array<[keyof typeof t.overview.featureNames, string]>;
  return (
    <main id="main" aria-busy={loading ? 'true' : 'false'}>
      <Title>{t.overview.title}</Title>
      <Messages error={error} status="" />
      {meta && data ? (
        <>
          <section aria-labelledby="server">
            <h2 id="server">{t.overview.server}</h2>
            <dl class="facts">
              <dt>{t.overview.version}</dt><dd data-testid="version">{meta.version}</dd>
              <dt>{t.overview.env}</dt><dd>{meta.env}</dd>
              <dt>{t.overview.deployment}</dt><dd data-testid="deployment">{t.overview.deployments[meta.deployment as keyof typeof t.overview.deployments] ?? meta.deployment}</dd>
              <dt>{t.overview.bus}</dt><dd data-testid="bus">{t.overview.buses[meta.bus as keyof typeof t.overview.buses] ?? meta.bus}</dd>
              <dt>{t.overview.database}</dt><dd>{meta.database_type}</dd>
              <dt>{t.overview.authz}</dt>
              <dd>{meta.authorization_engine?.is_enabled ? t.overview.authzOn(meta.authorization_engine.store ?? '', meta.authorization_engine.model_id ?? '') : t.overview.authzOff}</dd>
              <dt>{t.overview.roles}</dt><dd>{meta.roles.join(', ') || t.common.none}</dd>
              <dt>{t.overview.defaultRoles}</dt><dd>{meta.default_roles.join(', ') || t.common.none}</dd>
            </dl>
            {config.playground ? (
              <p><a href={`${config.basePath}/graphql`}>{t.overview.playground}</a> <span class="hint">{t.overview.playgroundHint}</span></p>
            ) : null}
          </section>
          <section aria-labelledby="counts">
            <h2 id="counts">{t.overview.counts}</h2>
            <dl class="facts">
              <dt>{t.overview.users}</dt><dd data-testid="count-users">{data.counts.users}</dd>
              <dt>{t.overview.clients}</dt><dd data-testid="count-clients">{data.counts.clients}</dd>
              <dt>{t.overview.organizations}</dt><dd data-testid="count-organizations">{data.counts.organizations}</dd>
              <dt>{t.overview.tuples}</dt><dd data-testid="count-tuples">{data.counts.tuplesMore ? t.overview.tuplesMore(data.counts.tuples) : data.counts.tuples}</dd>
            </dl>
          </section>
          <section aria-labelledby="features">
            <h2 id="features">{t.overview.features}</h2>
            <ul class="features">
              {features.map(([key, label]) => (
                <li key={key}><span>{label}</span> <strong class={meta[key] ? 'on' : 'off'}>{meta[key] ? t.common.on : t.common.off}</strong></li>
              ))}
            </ul>
          </section>
        </>
      ) : null}
    </main>
  );
}
