#!/usr/bin/env bash
# Installs OpenFGA's `fga` CLI (github.com/openfga/cli, a pinned release) into the repo-local
# .tools/bin/fga (idempotent: skips when the binary there reports that version). `npm run test:fga-cli`
# (test/fga-cli/fga-cli-system.ts) drives Gatehouse's OpenFGA API with it: `fga store create`,
# `fga model write`, `fga tuple write`, `fga query check`, `fga tuple read` and `fga model test`.
#
# How it is built, and why so: only the Go module proxy is reachable here, and it
# - answers 403 for the deprecation/version-list look-ups `go install github.com/openfga/cli/cmd/fga@v…`
#   makes, so the CLI is built from a throw-away module that requires it (go.mod + a tools.go importing
#   the command, `go mod tidy`, `go build`);
# - refuses github.com/openfga/openfga v1.10.4, the server module the CLI v0.7.8 requires (its
#   `fga model test` embeds an OpenFGA server for tests without --api-url). The `replace` below builds it
#   with v1.10.3 instead: the patch release before, the same API and language versions; `fga model test`
#   against a server (--api-url, as the Gatehouse script runs it) never runs that embedded server.
# The release's version string is linked in with -ldflags, as the CLI's goreleaser config does
# (internal/build.Version), so `fga version` tells which release this is.
# GOTOOLCHAIN=local, as in scripts/install-openfga.sh: build with the installed Go (>= 1.24).
# Niced: the build is long and the machines are shared.
# Measured here (2 cores, shared): about 6 minutes cold on a quiet machine (module downloads + a full
# build of the CLI and the OpenFGA server packages it imports), 20 minutes under a load average of 40
# (modules cached); a second when already installed.
set -euo pipefail

FGA_CLI_VERSION="${FGA_CLI_VERSION:-v0.7.8}"
# the server module the CLI is built with (see the `replace` above)
FGA_SERVER_VERSION="${FGA_SERVER_VERSION:-v1.10.3}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.tools/bin"
FGA="$BIN/fga"

# `fga version` prints e.g. "fga version v`0.7.8` (commit: …)"
if [ -x "$FGA" ] && "$FGA" version 2>&1 | grep -qF "v\`${FGA_CLI_VERSION#v}\`"; then
  echo "fga already installed: $("$FGA" version 2>&1 | head -1)"
  exit 0
fi

# Debian's Go lives outside the default PATH of non-login shells (CI runs `bash .ci/run`).
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-fga-cli: go is not on PATH; install Go (>= 1.24) first" >&2
  exit 1
fi
export GOTOOLCHAIN=local
GO_LINE="$(go env GOVERSION | sed -n 's/^go\([0-9]*\.[0-9]*\).*/\1/p')"

mkdir -p "$BIN"
start=$(date +%s)
echo "install-fga-cli: building github.com/openfga/cli/cmd/fga@$FGA_CLI_VERSION (server module $FGA_SERVER_VERSION) into $BIN"

MOD="$(mktemp -d)"
trap 'chmod -R u+w "$MOD" 2>/dev/null; rm -rf "$MOD"' EXIT
cat >"$MOD/go.mod" <<EOF
module fgacli

go ${GO_LINE}

require github.com/openfga/cli ${FGA_CLI_VERSION}

require github.com/openfga/openfga ${FGA_SERVER_VERSION}

// the proxy refuses v1.10.4, the version the CLI requires: build with the patch release before it
replace github.com/openfga/openfga v1.10.4 => github.com/openfga/openfga ${FGA_SERVER_VERSION}
EOF
cat >"$MOD/tools.go" <<'EOF'
//go:build tools

// Package tools only pins the command built from this module.
package tools

import _ "github.com/openfga/cli/cmd/fga"
EOF

LDFLAGS="-s -w -X github.com/openfga/cli/internal/build.Version=${FGA_CLI_VERSION#v}"
LDFLAGS="$LDFLAGS -X github.com/openfga/cli/internal/build.Commit=module-proxy"
LDFLAGS="$LDFLAGS -X github.com/openfga/cli/internal/build.Date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
(cd "$MOD" && nice -n 10 go mod tidy && CGO_ENABLED=0 nice -n 10 go build -trimpath -buildvcs=false \
  -ldflags "$LDFLAGS" -o "$FGA" github.com/openfga/cli/cmd/fga)
echo "install-fga-cli: $("$FGA" version 2>&1 | head -1) installed in $(( $(date +%s) - start ))s"
