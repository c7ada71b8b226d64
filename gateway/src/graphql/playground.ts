/**
 * @module gateway/graphql/playground
 * The GraphQL playground (graphql.md §1.1 "Playground"; behaviour.md §1.3 `--enable-playground`,
 * default true, super-admin credentials required): GraphiQL at `GET /graphql` for browsers, served
 * whole by the gateway. Its scripts and stylesheet are read from node_modules at startup (GraphiQL 3's
 * UMD bundle and React 18's, the last React with UMD builds) and served under `/graphql/playground/`
 * with content-hashed names; the page references no other origin and runs under its own CSP.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Express, Request } from 'express';

export interface PlaygroundOptions {
  /**
   * Resolves when the request carries super-admin credentials (behaviour.md §1.3, §2.3 "Admin": the
   * `service-admin` cookie, then `x-service-admin-secret` unless `--disable-admin-header-auth`), else
   * rejects with the AppError to answer (401 `unauthorized`; 429 while the client IP is locked out).
   * The gateway asks the admin service (`AdminService.AdminMeta`, an admin-class RPC), so the page is
   * opened by the same guard, admin-secret check and failure counter as every admin call.
   */
  admit(req: Request): Promise<void>;
  /** the path prefix of `--url` (`/auth` for `https://example.com/auth`), `''` for none */
  basePath: string;
}

/** Where the assets are served; the names under it carry a content hash, so they are cached for good. */
export const PLAYGROUND_ASSETS_PATH = '/graphql/playground';

/**
 * The page's CSP: scripts, styles and fetches from the gateway only, fonts and images also as `data:`
 * (GraphiQL inlines its fonts), nothing framed, no forms, no `<base>`, no 'unsafe-inline'. The one
 * `<style>` element GraphiQL writes (the scroll lock of its dialogs, react-remove-scroll) carries the
 * page's nonce, which the boot script hands it through `__webpack_nonce__`; other styles go through
 * the CSSOM, which CSP does not restrict.
 * @param nonce 128 random bits as hex (a valid CSP nonce with no '/', so the page holds no '//'), fresh for every page
 */
export const playgroundCsp = (nonce: string): string =>
  `default-src 'none'; script-src 'self'; style-src 'self' 'nonce-${nonce}'; font-src 'self' data:; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

const PAGE_CSS = 'html, body, #graphiql { height: 100%; margin: 0; overflow: hidden; }\n';

// Runs after react, react-dom and graphiql have set their globals; reads the endpoint and nonce from the page.
const BOOT_JS = `(function () {
  var root = document.getElementById('graphiql');
  window.__webpack_nonce__ = root.getAttribute('data-style-nonce');
  var fetcher = GraphiQL.createFetcher({ url: root.getAttribute('data-endpoint') });
  ReactDOM.createRoot(root).render(React.createElement(GraphiQL, {
    fetcher: fetcher,
    defaultQuery: '# Gatehouse GraphQL playground. Admin operations use the service-admin cookie of\\n# POST /v1/admin/login, or the x-service-admin-secret header (Headers tab below).\\n{\\n  meta {\\n    version\\n  }\\n}\\n',
    defaultEditorToolsVisibility: 'headers',
    shouldPersistHeaders: false,
  }));
})();
`;

interface Asset { name: string; type: string; body: Buffer }

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

function asset(stem: string, ext: '.js' | '.css', body: Buffer): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
  return { name: `${stem}.${hash}${ext}`, type: ext === '.js' ? JS : CSS, body };
}

/** Reads a file of an installed package (its `exports` do not list the UMD files). */
function packageFile(pkg: string, file: string): Buffer {
  const require = createRequire(import.meta.url);
  return readFileSync(path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file));
}

/**
 * Loads the assets, in page order: the stylesheets, then the scripts.
 * @throws Error when graphiql, react or react-dom is not installed (a startup failure)
 */
function loadAssets(): Asset[] {
  return [
    asset('graphiql.min', '.css', packageFile('graphiql', 'graphiql.min.css')),
    asset('playground', '.css', Buffer.from(PAGE_CSS)),
    asset('react.production.min', '.js', packageFile('react', 'umd/react.production.min.js')),
    asset('react-dom.production.min', '.js', packageFile('react-dom', 'umd/react-dom.production.min.js')),
    asset('graphiql.min', '.js', packageFile('graphiql', 'graphiql.min.js')),
    asset('playground', '.js', Buffer.from(BOOT_JS)),
  ];
}

const escapeAttr = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The page, with `{{nonce}}` where each response puts its own. */
function renderPage(assets: readonly Asset[], basePath: string): string {
  const href = (a: Asset): string => escapeAttr(`${basePath}${PLAYGROUND_ASSETS_PATH}/${a.name}`);
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Gatehouse GraphQL playground</title>',
    '<link rel="icon" href="data:,">', // no /favicon.ico request (the gateway has none)
    ...assets.filter((a) => a.type === CSS).map((a) => `<link rel="stylesheet" href="${href(a)}">`),
    '</head>',
    '<body>',
    `<div id="graphiql" data-endpoint="${escapeAttr(`${basePath}/graphql`)}" data-style-nonce="{{nonce}}">Loading…</div>`,
    ...assets.filter((a) => a.type === JS).map((a) => `<script src="${href(a)}"></script>`),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/**
 * Mounts the playground on `app`, before the `/graphql` fallback routes:
 * - `GET /graphql` whose `Accept` prefers `text/html` (a browser): the page, 200 `text/html`, `no-store`,
 *   {@link playgroundCsp}; without super-admin credentials, 401 `unauthenticated` `unauthorized`
 *   (429 `resource_exhausted` while the client IP is locked out by wrong admin secrets). Either
 *   credential opens it: the `service-admin` cookie of `POST /v1/admin/login` (a normal browser) or
 *   the `x-service-admin-secret` header (a header-injecting tool), both judged by
 *   {@link PlaygroundOptions.admit}. Any other GET falls through (405, as without the playground: no
 *   GraphQL over GET, graphql.md §1.1).
 * - `GET /graphql/playground/<name>`: the assets, public (library code), cached as immutable.
 * @throws Error when the packages are missing (a startup failure)
 */
export function mountPlayground(app: Express, opts: PlaygroundOptions): void {
  const assets = loadAssets();
  const byName = new Map(assets.map((a) => [a.name, a]));
  const page = renderPage(assets, opts.basePath);
  app.get('/graphql', (req, res, next) => {
    res.vary('Accept');
    if (req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) !== 'text/html') { next(); return; }
    opts.admit(req).then(() => {
      const nonce = randomBytes(16).toString('hex');
      res.setHeader('Content-Security-Policy', playgroundCsp(nonce));
      res.setHeader('Cache-Control', 'no-store');
      res.type('html').status(200).send(page.replace('{{nonce}}', nonce));
    }, next);
  });
  app.get(`${PLAYGROUND_ASSETS_PATH}/:name`, (req, res, next) => {
    const found = byName.get(req.params.name);
    if (!found) { next(); return; }
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    res.setHeader('Content-Type', found.type);
    res.status(200).end(found.body);
  });
}
