#!/usr/bin/env bash
# Installs grpcurl into the repo-local .tools/bin (idempotent: skips when already there). The gRPC
# reflection tests and the README's gRPC example use it as a real third-party gRPC client. Built
# with `go install` through the Go module proxy, like helm (scripts/install-helm.sh).
# No prebuilt grpcurl exists in the registries this project installs from (npm, Debian bookworm), so it is
# compiled. Measured: a few seconds with warm Go caches; cold (empty module and build caches) it downloads
# and compiles grpc-go and protobuf, up to 12 minutes on a busy 2-core machine.
set -euo pipefail

GRPCURL_VERSION="${GRPCURL_VERSION:-v1.9.3}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.tools/bin"

if [ -x "$BIN/grpcurl" ]; then
  echo "grpcurl already installed: $("$BIN/grpcurl" -version 2>&1)"
  exit 0
fi
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-grpcurl: go is not on PATH; install Go (>= 1.23) first" >&2
  exit 1
fi
mkdir -p "$BIN"
echo "install-grpcurl: building grpcurl $GRPCURL_VERSION with Go (seconds with warm caches; a cold build can take several minutes)"
start=$(date +%s)
GOBIN="$BIN" CGO_ENABLED=0 go install -trimpath -ldflags "-X main.version=$GRPCURL_VERSION" "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION"
echo "install-grpcurl: $("$BIN/grpcurl" -version 2>&1) installed in $(( $(date +%s) - start ))s"
