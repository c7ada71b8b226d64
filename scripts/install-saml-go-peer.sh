#!/usr/bin/env bash
# Builds test/saml-go-peer (our own small command line over github.com/crewjam/saml v0.5.1, a SAML 2.0
# implementation from the Go ecosystem, independent of the Node libraries Gatehouse uses) into the
# repo-local .tools/bin/saml-go-peer, for test/e2e/saml-go-peer.e2e.test.ts. Idempotent: skips when the
# binary there was built from the same sources (a sha256 of go.mod, go.sum and *.go is kept beside it).
# The modules come from the Go module proxy; GOTOOLCHAIN=local builds with the installed Go.
# Measured here (2 cores, shared): about 35 s with the modules downloaded and a cold build cache,
# 2 s to rebuild warm; the module download itself is a few seconds (six small modules).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/test/saml-go-peer"
BIN="$ROOT/.tools/bin"
OUT="$BIN/saml-go-peer"
STAMP="$OUT.sha256"

SUM="$(cd "$SRC" && cat go.mod go.sum ./*.go | sha256sum | cut -d' ' -f1)"
if [ -x "$OUT" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$SUM" ]; then
  echo "saml-go-peer already built from these sources"
  exit 0
fi

# Debian's Go lives outside the default PATH of non-login shells (CI runs `bash .ci/run`).
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-saml-go-peer: go is not on PATH; install Go (>= 1.24) first" >&2
  exit 1
fi
export GOTOOLCHAIN=local

mkdir -p "$BIN"
start=$(date +%s)
echo "install-saml-go-peer: building $SRC into $OUT"
(cd "$SRC" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$OUT" .)
echo "$SUM" >"$STAMP"
echo "install-saml-go-peer: built in $(( $(date +%s) - start ))s"
