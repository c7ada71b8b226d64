#!/usr/bin/env bash
# Installs FerretDB v1 (MongoDB wire protocol on SQLite) into the repo-local .tools/bin (idempotent:
# skips when already there). No MongoDB server exists on these machines (TOOLCHAIN.md); the MongoDB
# driver tests of libs/db (libs/db/src/mongodb.int.test.ts) start their own FerretDB from this binary.
#
# Why not plain `go install github.com/FerretDB/FerretDB/cmd/ferretdb@v1.24.0`:
#   - the module proxy here answers 403 for the module's version list, which `go install pkg@version`
#     reads for its deprecation check, so that command fails before building;
#   - FerretDB embeds build/version/version.txt, which its release process generates and the module
#     zip leaves empty: a binary built straight from the module panics at start.
# So: `go mod download` the exact version, copy its source to a temp dir, write version.txt, and
# build ./cmd/ferretdb from inside that copy (its own go.mod/go.sum pin every dependency).
# Measured here (2 cores, shared): about 2 minutes cold (module downloads + full build), a few
# seconds when the Go module and build caches are warm.
set -euo pipefail

FERRETDB_VERSION="${FERRETDB_VERSION:-v1.24.0}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.tools/bin"
FERRETDB="$BIN/ferretdb"

if [ -x "$FERRETDB" ] && "$FERRETDB" --version >/dev/null 2>&1; then
  echo "ferretdb already installed: $("$FERRETDB" --version 2>&1 | head -1)"
  exit 0
fi

# Debian's Go lives outside the default PATH of non-login shells (CI runs `bash .ci/run`).
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-ferretdb: go is not on PATH; install Go (>= 1.22) first" >&2
  exit 1
fi

mkdir -p "$BIN"
start=$(date +%s)
echo "install-ferretdb: building github.com/FerretDB/FerretDB/cmd/ferretdb@$FERRETDB_VERSION into $BIN"
MODDIR="$(cd / && go mod download -json "github.com/FerretDB/FerretDB@$FERRETDB_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [ -z "$MODDIR" ] || [ ! -f "$MODDIR/go.mod" ]; then
  echo "install-ferretdb: go mod download github.com/FerretDB/FerretDB@$FERRETDB_VERSION failed" >&2
  exit 1
fi

SRC="$(mktemp -d)"
trap 'chmod -R u+w "$SRC" 2>/dev/null; rm -rf "$SRC"' EXIT
cp -R "$MODDIR/." "$SRC/"
chmod -R u+w "$SRC"
echo "$FERRETDB_VERSION" >"$SRC/build/version/version.txt"
echo "gatehouse-install-script" >"$SRC/build/version/package.txt"
(cd "$SRC" && GOBIN="$BIN" CGO_ENABLED=0 GOFLAGS=-mod=mod go install -trimpath -buildvcs=false ./cmd/ferretdb)
echo "install-ferretdb: $("$FERRETDB" --version 2>&1 | head -1) installed in $(( $(date +%s) - start ))s"
