#!/usr/bin/env bash
# Installs the helm CLI into the repo-local .tools/bin (idempotent: skips when already there).
# Built from source with `go install` through the Go module proxy, the only route to helm on these
# machines (TOOLCHAIN.md, "Services in tests"). The chart tests in test/charts need it.
# Measured here (2 cores, shared with other jobs): about 8 minutes cold (module downloads + full
# build), about 11 seconds when the Go module and build caches are warm (a later CI run in a fresh
# clone on the same machine).
set -euo pipefail

HELM_VERSION="${HELM_VERSION:-v3.17.3}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.tools/bin"
HELM="$BIN/helm"

if [ -x "$HELM" ]; then
  echo "helm already installed: $("$HELM" version --short)"
  exit 0
fi

# Debian's Go lives outside the default PATH of non-login shells (CI runs `bash .ci/run`).
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-helm: go is not on PATH; install Go (>= 1.23) first" >&2
  exit 1
fi

mkdir -p "$BIN"
start=$(date +%s)
echo "install-helm: go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION into $BIN"
# The ldflags are the ones helm's Makefile sets: without them `helm version` has no patch level and
# helm assumes Kubernetes v1.20 (the chart's kubeVersion would refuse to render). client-go v0.32
# (helm 3.17's) is Kubernetes 1.32.
LDFLAGS="-w -s -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
for pkg in pkg/lint/rules pkg/chartutil; do
  LDFLAGS="$LDFLAGS -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=32"
done
GOBIN="$BIN" CGO_ENABLED=0 go install -trimpath -ldflags "$LDFLAGS" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
echo "install-helm: $("$HELM" version --short) installed in $(( $(date +%s) - start ))s"
