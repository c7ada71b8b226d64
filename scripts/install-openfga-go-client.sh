#!/usr/bin/env bash
# Builds test/openfga-go-client (a small command line over OpenFGA's Go SDK, github.com/openfga/go-sdk:
# the HTTP client the `fga` CLI is built on) into the repo-local .tools/bin/openfga-go-client, for
# test/e2e/openfga-go-client.e2e.test.ts. Idempotent: skips when the binary there was built from the
# same sources (a sha256 of go.mod, go.sum and *.go is kept beside it).
#
# Why not the `fga` CLI itself: the Go module proxy reachable here does not serve github.com/openfga/cli
# (403 "This module version is not available" for v0.7.6 and v0.8.2), while it serves the SDK v0.8.2 the
# CLI v0.8.x requires, and github.com/openfga/language (the DSL transformer the CLI uses).
# GOTOOLCHAIN=local, as in scripts/install-openfga.sh: build with the installed Go.
# Measured here (2 cores, shared): 130 s cold (empty module and build caches), 2 s to rebuild warm.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/test/openfga-go-client"
BIN="$ROOT/.tools/bin"
OUT="$BIN/openfga-go-client"
STAMP="$OUT.sha256"

SUM="$(cd "$SRC" && cat go.mod go.sum ./*.go | sha256sum | cut -d' ' -f1)"
if [ -x "$OUT" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$SUM" ]; then
  echo "openfga-go-client already built from these sources"
  exit 0
fi

# Debian's Go lives outside the default PATH of non-login shells (CI runs `bash .ci/run`).
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-openfga-go-client: go is not on PATH; install Go (>= 1.25) first" >&2
  exit 1
fi
export GOTOOLCHAIN=local

mkdir -p "$BIN"
start=$(date +%s)
echo "install-openfga-go-client: building $SRC into $OUT"
(cd "$SRC" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$OUT" .)
echo "$SUM" >"$STAMP"
echo "install-openfga-go-client: built in $(( $(date +%s) - start ))s"
