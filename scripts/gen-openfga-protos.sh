#!/usr/bin/env bash
# Writes services/authz/src/openfga-api/openfga-v1.binpb: the FileDescriptorSet of OpenFGA's published API
# (openfga/v1/openfga_service.proto and every file it imports), taken from the Go module
# github.com/openfga/api/proto at the version scripts/openfga-protos/go.mod pins (the one OpenFGA v1.22.1,
# scripts/install-openfga.sh, is built with). The authz service's gRPC form of openfga.v1.OpenFGAService
# (--openfga-grpc-port) loads it; the file is committed, so only a version bump needs this script.
# The openfga/api repository publishes its .proto sources through buf and GitHub, which are not reachable
# here; its Go module is, and it embeds the same descriptors (protodesc turns them back into a set).
# GOTOOLCHAIN=local, as in scripts/install-openfga.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
export GOTOOLCHAIN=local
cd "$ROOT/scripts/openfga-protos"
go run . "$ROOT/services/authz/src/openfga-api/openfga-v1.binpb"
