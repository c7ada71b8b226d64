#!/usr/bin/env bash
# Installs the OpenFGA server (a pinned release) into the repo-local .tools/bin (idempotent: skips when
# the binary there already reports that version). The authz OpenFGA backend tests (issue 21 §4:
# `--fga-store=openfga`, the e2e suites in that configuration and the differential test of
# services/authz/test/openfga/) start their own `openfga run` from this binary, on 127.0.0.1 with the
# in-memory datastore.
#
# Built the way scripts/install-ferretdb.sh builds FerretDB, for the same reasons: only the Go module
# proxy is reachable here and it answers 403 for module version lists, which `go install pkg@version`
# reads. So: `go mod download` the exact version, copy its source to a temp dir and build ./cmd/openfga
# from inside that copy (its own go.mod/go.sum pin every dependency). The release's version string is
# linked in with -ldflags, as OpenFGA's goreleaser config does (internal/build.Version).
# GOTOOLCHAIN=local: the module's `toolchain` line would otherwise make go download a newer toolchain;
# its `go` line (1.26) is what the installed Go must satisfy.
# Measured here (2 cores, shared): a few minutes cold (module downloads + full build), seconds warm.
set -euo pipefail

OPENFGA_VERSION="${OPENFGA_VERSION:-v1.22.1}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.tools/bin"
OPENFGA="$BIN/openfga"

if [ -x "$OPENFGA" ] && "$OPENFGA" version 2>&1 | grep -q "${OPENFGA_VERSION#v}"; then
  echo "openfga already installed: $("$OPENFGA" version 2>&1 | head -1)"
  exit 0
fi

# Debian's Go lives outside the default PATH of non-login shells (CI runs `bash .ci/run`).
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-openfga: go is not on PATH; install Go (>= 1.26) first" >&2
  exit 1
fi
export GOTOOLCHAIN=local

mkdir -p "$BIN"
start=$(date +%s)
echo "install-openfga: building github.com/openfga/openfga/cmd/openfga@$OPENFGA_VERSION into $BIN"
MODDIR="$(cd / && go mod download -json "github.com/openfga/openfga@$OPENFGA_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [ -z "$MODDIR" ] || [ ! -f "$MODDIR/go.mod" ]; then
  echo "install-openfga: go mod download github.com/openfga/openfga@$OPENFGA_VERSION failed" >&2
  exit 1
fi

SRC="$(mktemp -d)"
trap 'chmod -R u+w "$SRC" 2>/dev/null; rm -rf "$SRC"' EXIT
cp -R "$MODDIR/." "$SRC/"
chmod -R u+w "$SRC"
LDFLAGS="-s -w -X github.com/openfga/openfga/internal/build.Version=${OPENFGA_VERSION#v}"
LDFLAGS="$LDFLAGS -X github.com/openfga/openfga/internal/build.Commit=module-proxy"
(cd "$SRC" && GOBIN="$BIN" CGO_ENABLED=0 GOFLAGS=-mod=mod go install -trimpath -buildvcs=false \
  -ldflags "$LDFLAGS" ./cmd/openfga)
echo "install-openfga: $("$OPENFGA" version 2>&1 | head -1) installed in $(( $(date +%s) - start ))s"
