#!/usr/bin/env bash
# Fetches OpenFGA's own conformance data (assets/tests/*.yaml of the pinned OpenFGA release: the consolidated
# schema 1.1 cases and the ABAC / conditions cases) into the repo-local .tools/openfga-tests, for
# services/authz/test/openfga/openfga-suites.test.ts, which replays them against the embedded engine.
# The data is read from the release's Go module (the Go module proxy is the one source reachable here), as
# scripts/install-openfga.sh reads its source; it is not copied into the repository. Idempotent: skips when
# .tools/openfga-tests already holds that version's files. Warm: under a second; cold: a few seconds.
set -euo pipefail

OPENFGA_VERSION="${OPENFGA_VERSION:-v1.22.1}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/.tools/openfga-tests"

if [ -f "$DEST/VERSION" ] && [ "$(cat "$DEST/VERSION")" = "$OPENFGA_VERSION" ] && [ -f "$DEST/abac_tests.yaml" ]; then
  echo "openfga conformance data already installed: $OPENFGA_VERSION"
  exit 0
fi

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-openfga-tests: go is not on PATH; install Go first" >&2
  exit 1
fi
export GOTOOLCHAIN=local

MODDIR="$(cd / && go mod download -json "github.com/openfga/openfga@$OPENFGA_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [ -z "$MODDIR" ] || [ ! -f "$MODDIR/assets/tests/abac_tests.yaml" ]; then
  echo "install-openfga-tests: go mod download github.com/openfga/openfga@$OPENFGA_VERSION gave no assets/tests" >&2
  exit 1
fi
mkdir -p "$DEST"
cp "$MODDIR"/assets/tests/*.yaml "$DEST/"
chmod u+w "$DEST"/*.yaml
echo "$OPENFGA_VERSION" > "$DEST/VERSION"
echo "install-openfga-tests: OpenFGA $OPENFGA_VERSION conformance data in $DEST"
