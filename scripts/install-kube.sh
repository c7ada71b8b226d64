#!/usr/bin/env bash
# Builds what the single-node test cluster of scripts/kube-up.sh runs and that Debian does not ship,
# into the repo-local .tools/kube/bin (idempotent: every binary already there at the right version is
# reused, so only the first run compiles):
#   - kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl
#     from the k8s.io/kubernetes module, through test/k8s/kube (a module of ours: k8s.io/kubernetes
#     replaces its staging modules with paths inside its own repository, so that module replaces
#     each with its published k8s.io/* version);
#   - crictl, metrics-server and CoreDNS with `go install <pkg>@<version>` (no replace directives);
#   - pause (the sandbox process) from the kubernetes module's build/pause/linux/pause.c is C, so a
#     small Go equivalent in test/k8s/pause is built instead (sleeps, reaps children, exits on TERM).
# Debian provides the rest: containerd, runc, etcd, the CNI plugins (scripts/kube-up.sh installs them).
#
# Everything compiles under `nice -n 19` (other jobs share these 2 cores). Measured on a loaded
# machine: kube-apiserver about 28 min cold, the other Kubernetes binaries about 8 min more, the tools
# about 25 min; seconds when cached. The Go caches (about 8 GB) are Go's defaults and may be deleted
# afterwards with `go clean -cache -modcache`.
#
#   bash scripts/install-kube.sh          # build what is missing
#   KUBE_REBUILD=1 bash scripts/install-kube.sh
#   KUBE_TOOLS_ONLY=1 bash scripts/install-kube.sh   # only crictl, CoreDNS, metrics-server, pause
set -euo pipefail

KUBE_VERSION=v1.34.4
CRICTL_VERSION=v1.34.0
METRICS_SERVER_VERSION=v0.8.0
COREDNS_VERSION=v1.12.4

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.tools/kube/bin"
NICE=(nice -n 19)
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then PATH="/usr/local/go/bin:$PATH"; fi
command -v go >/dev/null || { echo "install-kube: go is not on PATH" >&2; exit 1; }
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false
mkdir -p "$BIN"
log() { printf '[install-kube] %s\n' "$*" >&2; }
t_all=$(date +%s)

# --- Kubernetes components ---------------------------------------------------------------------
# kubectl last, in a build of its own, so the cluster's components are there first; KUBE_NO_KUBECTL=1
# skips it (any kubectl within one minor version of the server, e.g. one already on PATH, does the job).
COMPONENTS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)
[[ -n "${KUBE_NO_KUBECTL:-}" ]] || COMPONENTS+=(kubectl)
minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
missing=()
for c in "${COMPONENTS[@]}"; do
  if [[ -z "${KUBE_REBUILD:-}" && -x "$BIN/$c" ]] && "$BIN/$c" --version 2>/dev/null | grep -q "$KUBE_VERSION"; then continue; fi
  [[ $c == kubectl ]] && [[ -z "${KUBE_REBUILD:-}" && -x "$BIN/kubectl" ]] \
    && "$BIN/kubectl" version --client 2>/dev/null | grep -q "$KUBE_VERSION" && continue
  missing+=("$c")
done
if ((${#missing[@]})) && [[ -z "${KUBE_TOOLS_ONLY:-}" ]]; then
  log "building ${missing[*]} $KUBE_VERSION (k8s.io/kubernetes, niced)"
  t0=$(date +%s)
  ldflags="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  cd "$ROOT/test/k8s/kube"
  [[ -f go.sum ]] || "${NICE[@]}" go mod tidy
  pkgs=(); for c in "${missing[@]}"; do [[ $c == kubectl ]] || pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  # One `go build` of the cluster's commands: the shared packages compile once.
  ((${#pkgs[@]})) && "${NICE[@]}" go build -trimpath -ldflags "$ldflags" -o "$BIN/" "${pkgs[@]}"
  if [[ " ${missing[*]} " == *" kubectl "* ]]; then
    "${NICE[@]}" go build -trimpath -ldflags "$ldflags" -o "$BIN/kubectl" k8s.io/kubernetes/cmd/kubectl
  fi
  cd "$ROOT"
  log "Kubernetes components built in $(( $(date +%s) - t0 )) s"
fi

# --- tools -------------------------------------------------------------------------------------
install_tool() { # <name> <package@version> <version check substring>
  local name=$1 pkg=$2 want=$3 t0
  if [[ -z "${KUBE_REBUILD:-}" && -x "$BIN/$name" && -f "$BIN/.$name.version" ]] && [[ "$(cat "$BIN/.$name.version")" == "$pkg" ]]; then return; fi
  log "go install $pkg"
  t0=$(date +%s)
  GOBIN="$BIN" "${NICE[@]}" go install -trimpath -ldflags "-s -w $want" "$pkg"
  echo "$pkg" > "$BIN/.$name.version"
  log "$name built in $(( $(date +%s) - t0 )) s"
}
install_tool crictl "sigs.k8s.io/cri-tools/cmd/crictl@$CRICTL_VERSION" "-X sigs.k8s.io/cri-tools/pkg/version.Version=$CRICTL_VERSION"
install_tool coredns "github.com/coredns/coredns@$COREDNS_VERSION" ""
install_tool metrics-server "sigs.k8s.io/metrics-server/cmd/metrics-server@$METRICS_SERVER_VERSION" \
  "-X sigs.k8s.io/metrics-server/pkg/version.gitVersion=$METRICS_SERVER_VERSION"

# --- pause ---------------------------------------------------------------------------------------
if [[ ! -x "$BIN/pause" || "$ROOT/test/k8s/pause/main.go" -nt "$BIN/pause" ]]; then
  (cd "$ROOT/test/k8s/pause" && "${NICE[@]}" go build -trimpath -ldflags "-s -w" -o "$BIN/pause" .)
fi

log "all binaries in $BIN ($(( $(date +%s) - t_all )) s)"
