#!/usr/bin/env bash
# Brings up a real single-node Kubernetes cluster on this machine, host-local only (issue 37 §2), for
# the system test `npm run test:k8s` and for trying the chart by hand:
#   - Debian's containerd, runc, etcd and CNI plugins (installed here with apt-get when missing);
#   - kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy built from the
#     k8s.io/kubernetes Go module, plus CoreDNS, metrics-server, crictl and pause
#     (scripts/install-kube.sh; cached in .tools/kube/bin, so only the first run compiles);
#   - addons: CoreDNS (cluster names only, no upstream) and metrics-server (the resource metrics API
#     that the authz HPA reads), from images built locally FROM scratch and imported into containerd.
#
# Layout: node `vm` with IP 172.31.255.1 (a /32 on lo; the API server listens there on 6443), Services
# 10.96.0.0/16 (DNS 10.96.0.10), pods 10.244.0.0/24 on the bridge ghkube0 (no masquerade: pods cannot
# reach the outside). etcd listens on 127.0.0.1:2379/2380. State, certificates and logs live in
# .tools/kube/run; `export KUBECONFIG=$PWD/.tools/kube/run/admin.kubeconfig` to use kubectl/helm.
#
# PostgreSQL, Redis and NATS are the machine's own servers on 127.0.0.1: socat relays on
# 172.31.255.1:{5432,6379,4222} forward to them, and the namespace `gatehouse-deps` has selector-less
# Services `postgres`, `redis`, `nats` whose endpoints are those relays, so pods use
# postgres.gatehouse-deps:5432 and so on.
#
# Host side effects while up (kube-down.sh removes them all): the lo address, iptables chains, the
# bridge, cgroups, /var/lib/kubelet (a shared bind mount), /var/lib/containerd. The kubelet's writes
# to kernel sysctls (kernel.panic_on_oops, ...) land on private copies in its own mount namespace, so
# the host's values stay unchanged.
#
#   bash scripts/kube-up.sh        # idempotent: a cluster already up is left as is
# Timings (cached binaries, loaded machine): about 20 s to a Ready node, about 25 s more for addons.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.tools/kube/bin"
R="$ROOT/.tools/kube/run"
IP=172.31.255.1
NODE=vm
KUBE_VERSION=v1.34.4
export PATH="$BIN:$PATH"
log() { printf '[kube-up %s] %s\n' "$(date +%T)" "$*" >&2; }
t_all=$(date +%s)

[[ $EUID -eq 0 ]] || { log "run as root (containerd, kubelet, iptables)"; exit 1; }

# --- packages and binaries -----------------------------------------------------------------------
need=()
for p in containerd:containerd runc:runc etcd:etcd-server conntrack:conntrack iptables:iptables \
         socat:socat openssl:openssl podman:podman; do
  command -v "${p%%:*}" >/dev/null || need+=("${p#*:}")
done
[[ -x /usr/lib/cni/bridge ]] || need+=(containernetworking-plugins)
if ((${#need[@]})); then
  log "apt-get install ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >/dev/null
fi
# A kubectl already on the machine does (a compile of kubectl saved); otherwise it is built too.
if [[ ! -x "$BIN/kubectl" ]] && PATH="${PATH#"$BIN:"}" command -v kubectl >/dev/null; then
  KUBE_NO_KUBECTL=1 bash "$ROOT/scripts/install-kube.sh"
else
  bash "$ROOT/scripts/install-kube.sh"
fi

mkdir -p "$R"/{pki,conf/cni,data,logs,pids,run,sysctl,images}
alive() { [[ -f "$R/pids/$1" ]] && kill -0 "$(cat "$R/pids/$1")" 2>/dev/null; }
start() { # <name> <command...>: background, log to $R/logs/<name>.log, pid in $R/pids/<name>
  local name=$1; shift
  if alive "$name"; then return; fi
  setsid "$@" >>"$R/logs/$name.log" 2>&1 < /dev/null &
  echo $! > "$R/pids/$name"
}
wait_for() { # <what> <seconds> <command...>
  local what=$1 secs=$2; shift 2
  for ((i = 0; i < secs * 2; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  log "timed out waiting for $what"; return 1
}

# --- PKI -----------------------------------------------------------------------------------------
P="$R/pki"
ca() { # <name> <CN>
  [[ -f "$P/$1.crt" ]] && return
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$P/$1.key" -out "$P/$1.crt" -days 3650 -subj "/CN=$2" 2>/dev/null
}
cert() { # <name> <ca> <subject> <extendedKeyUsage> [subjectAltName]
  local name=$1 cacert=$2 subj=$3 eku=$4 san=${5:-}
  [[ -f "$P/$name.crt" ]] && return
  openssl req -newkey rsa:2048 -nodes -keyout "$P/$name.key" -out "$P/$name.csr" -subj "$subj" 2>/dev/null
  { echo "keyUsage=critical,digitalSignature,keyEncipherment"; echo "extendedKeyUsage=$eku"
    [[ -n "$san" ]] && echo "subjectAltName=$san"; } > "$P/$name.ext"
  openssl x509 -req -in "$P/$name.csr" -CA "$P/$cacert.crt" -CAkey "$P/$cacert.key" -CAcreateserial \
    -days 3650 -extfile "$P/$name.ext" -out "$P/$name.crt" 2>/dev/null
  rm -f "$P/$name.csr" "$P/$name.ext"
}
ca ca gatehouse-kube-ca
ca front-proxy-ca gatehouse-kube-front-proxy-ca
cert apiserver ca "/CN=kube-apiserver" serverAuth \
  "IP:$IP,IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:$NODE,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
cert apiserver-kubelet-client ca "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
cert admin ca "/O=system:masters/CN=kubernetes-admin" clientAuth
cert controller-manager ca "/CN=system:kube-controller-manager" clientAuth
cert scheduler ca "/CN=system:kube-scheduler" clientAuth
cert kube-proxy ca "/CN=system:kube-proxy" clientAuth
cert kubelet-client ca "/O=system:nodes/CN=system:node:$NODE" clientAuth
cert kubelet ca "/CN=$NODE" serverAuth "IP:$IP,DNS:$NODE,DNS:localhost"
cert front-proxy-client front-proxy-ca "/CN=front-proxy-client" clientAuth
[[ -f "$P/sa.key" ]] || { openssl genrsa -out "$P/sa.key" 2048 2>/dev/null; openssl rsa -in "$P/sa.key" -pubout -out "$P/sa.pub" 2>/dev/null; }
chmod 0600 "$P"/*.key

kubeconfig() { # <file> <cert name> <user>
  [[ -f "$1" ]] && return
  cat > "$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: gatehouse-kube
  cluster:
    server: https://$IP:6443
    certificate-authority-data: $(base64 -w0 "$P/ca.crt")
users:
- name: "$3"
  user:
    client-certificate-data: $(base64 -w0 "$P/$2.crt")
    client-key-data: $(base64 -w0 "$P/$2.key")
contexts:
- name: gatehouse-kube
  context: { cluster: gatehouse-kube, user: "$3" }
current-context: gatehouse-kube
KC
  chmod 0600 "$1"
}
kubeconfig "$R/admin.kubeconfig" admin admin
kubeconfig "$R/conf/controller-manager.kubeconfig" controller-manager system:kube-controller-manager
kubeconfig "$R/conf/scheduler.kubeconfig" scheduler system:kube-scheduler
kubeconfig "$R/conf/kube-proxy.kubeconfig" kube-proxy system:kube-proxy
kubeconfig "$R/conf/kubelet.kubeconfig" kubelet-client "system:node:$NODE"
export KUBECONFIG="$R/admin.kubeconfig"

# --- host prerequisites --------------------------------------------------------------------------
ip addr show dev lo | grep -q "inet $IP/32" || ip addr add "$IP/32" dev lo
[[ "$(cat /proc/sys/net/ipv4/ip_forward)" == 1 ]] || sysctl -qw net.ipv4.ip_forward=1
[[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ]] || modprobe br_netfilter 2>/dev/null || true
[[ "$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null)" == 1 ]] || sysctl -qw net.bridge.bridge-nf-call-iptables=1 || true

# --- containerd ----------------------------------------------------------------------------------
SOCK="$R/run/containerd/containerd.sock"
cat > "$R/conf/containerd.toml" <<TOML
version = 2
root = "/var/lib/containerd"
state = "$R/run/containerd-state"
[grpc]
  address = "$SOCK"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/pause:$KUBE_VERSION"
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$R/conf/cni"
TOML
cat > "$R/conf/cni/10-gatehouse.conflist" <<JSON
{
  "cniVersion": "0.4.0",
  "name": "gatehouse-kube",
  "plugins": [
    { "type": "bridge", "bridge": "ghkube0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "10.244.0.0/24" }]],
                "routes": [{ "dst": "0.0.0.0/0" }], "dataDir": "$R/data/cni-ipam" } },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
JSON
mkdir -p "$R/run/containerd"
# A pod's network namespace is a bind mount at /run/netns/cni-*. podman and buildah (build-image.sh,
# compose) make /run/netns a mount point of its own the first time they need a namespace there, by
# bind-mounting the directory onto itself with the mounts it holds: a pod started before that then has
# its namespace under the copy, containerd cannot remove it (unlinkat: device or resource busy), its
# sandbox never stops, and the next kube-up's kubelet stalls on it. Made a shared mount point here
# first, nothing stacks another one on it.
mkdir -p /run/netns
mountpoint -q /run/netns || mount --bind /run/netns /run/netns
mount --make-shared /run/netns
start containerd containerd --config "$R/conf/containerd.toml"
wait_for containerd 30 ctr --address "$SOCK" version

# --- images the cluster itself needs (FROM scratch, built locally) -------------------------------
export CONTAINERS_CONF="$ROOT/scripts/podman/containers.conf"
image() { # <name> <files...>: localhost/<name>:<tag> from scratch holding the binaries, imported into containerd
  local name=$1 tag=$2; shift 2
  ctr --address "$SOCK" -n k8s.io images ls -q | grep -qx "localhost/$name:$tag" && return
  local dir="$R/images/$name"; rm -rf "$dir"; mkdir -p "$dir"
  local files=() f
  for f in "$@"; do cp -L "$f" "$dir/"; files+=("$(basename "$f")"); done
  { echo "FROM scratch"; for f in "${files[@]}"; do echo "COPY $f /$f"; done
    echo "USER 65534:65534"; echo "ENTRYPOINT [\"/${files[0]}\"]"; } > "$dir/Containerfile"
  podman build -q --pull=never -t "localhost/$name:$tag" "$dir" >/dev/null
  # docker-archive: its RepoTags carry the full name, which containerd keeps as the image's name
  podman save --format docker-archive -o "$dir.tar" "localhost/$name:$tag" >/dev/null
  ctr --address "$SOCK" -n k8s.io images import "$dir.tar" >/dev/null
  rm -rf "$dir" "$dir.tar"
  log "image localhost/$name:$tag imported"
}
image pause "$KUBE_VERSION" "$BIN/pause"
image coredns "$(sed 's/.*@//' "$BIN/.coredns.version")" "$BIN/coredns"
image metrics-server "$(sed 's/.*@//' "$BIN/.metrics-server.version")" "$BIN/metrics-server"

# --- etcd and the control plane ------------------------------------------------------------------
start etcd etcd --name "$NODE" --data-dir "$R/data/etcd" \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster "$NODE=http://127.0.0.1:2380" --listen-metrics-urls http://127.0.0.1:2381
wait_for etcd 30 curl -sf http://127.0.0.1:2379/health

start kube-apiserver kube-apiserver --advertise-address="$IP" --bind-address="$IP" --secure-port=6443 \
  --etcd-servers=http://127.0.0.1:2379 --service-cluster-ip-range=10.96.0.0/16 \
  --client-ca-file="$P/ca.crt" --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" \
  --kubelet-client-certificate="$P/apiserver-kubelet-client.crt" --kubelet-client-key="$P/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority="$P/ca.crt" --kubelet-preferred-address-types=InternalIP \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
  --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction --allow-privileged=true \
  --requestheader-client-ca-file="$P/front-proxy-ca.crt" --requestheader-allowed-names=front-proxy-client \
  --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
  --requestheader-extra-headers-prefix=X-Remote-Extra- \
  --proxy-client-cert-file="$P/front-proxy-client.crt" --proxy-client-key-file="$P/front-proxy-client.key" \
  --enable-aggregator-routing=true
wait_for kube-apiserver 90 kubectl get --raw /readyz

# The HPA's scale-down window is 30 s instead of 5 min, so the system test sees authz scale back.
start kube-controller-manager kube-controller-manager --kubeconfig="$R/conf/controller-manager.kubeconfig" \
  --authentication-kubeconfig="$R/conf/controller-manager.kubeconfig" --authorization-kubeconfig="$R/conf/controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --leader-elect=false \
  --cluster-signing-cert-file="$P/ca.crt" --cluster-signing-key-file="$P/ca.key" --root-ca-file="$P/ca.crt" \
  --service-account-private-key-file="$P/sa.key" --use-service-account-credentials=true \
  --allocate-node-cidrs=true --cluster-cidr=10.244.0.0/16 --node-cidr-mask-size=24 --service-cluster-ip-range=10.96.0.0/16 \
  --flex-volume-plugin-dir="$R/data/flexvolume" --horizontal-pod-autoscaler-downscale-stabilization=30s
start kube-scheduler kube-scheduler --kubeconfig="$R/conf/scheduler.kubeconfig" \
  --authentication-kubeconfig="$R/conf/scheduler.kubeconfig" --authorization-kubeconfig="$R/conf/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --leader-elect=false

# --- kubelet -------------------------------------------------------------------------------------
cat > "$R/conf/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $IP
healthzBindAddress: 127.0.0.1
healthzPort: 10248
readOnlyPort: 0
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: $P/ca.crt }
authorization: { mode: Webhook }
tlsCertFile: $P/kubelet.crt
tlsPrivateKeyFile: $P/kubelet.key
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
clusterDNS: [10.96.0.10]
clusterDomain: cluster.local
containerRuntimeEndpoint: unix://$SOCK
evictionHard: { memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1% }
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
oomScoreAdj: 0
volumePluginDir: $R/data/kubelet-plugins
serializeImagePulls: false
YAML
mkdir -p /var/lib/kubelet
findmnt -n /var/lib/kubelet >/dev/null || mount --bind /var/lib/kubelet /var/lib/kubelet
mount --make-rshared /var/lib/kubelet
# The kernel tunables the kubelet sets: private copies, bind-mounted over /proc/sys in its own mount
# namespace (/proc made private there first), so its writes never reach the host.
TUNABLES="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes"
for t in $TUNABLES; do cat "/proc/sys/$t" > "$R/sysctl/${t//\//.}"; done
start kubelet unshare -m --propagation unchanged sh -c "
  set -e; mount --make-rprivate /proc
  for t in $TUNABLES; do f=\$(echo \$t | tr / .); mount --bind '$R/sysctl/'\$f /proc/sys/\$t; done
  exec '$BIN/kubelet' --config='$R/conf/kubelet.yaml' --kubeconfig='$R/conf/kubelet.kubeconfig' \
    --node-ip=$IP --hostname-override=$NODE --v=1"

# --- kube-proxy ----------------------------------------------------------------------------------
cat > "$R/conf/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: { kubeconfig: $R/conf/kube-proxy.kubeconfig }
mode: iptables
clusterCIDR: 10.244.0.0/16
hostnameOverride: $NODE
nodePortAddresses: ["$IP/32"]
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s }
YAML
start kube-proxy kube-proxy --config="$R/conf/kube-proxy.yaml"

wait_for "node $NODE Ready" 120 sh -c "kubectl get node $NODE -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
log "node $NODE Ready ($(( $(date +%s) - t_all )) s)"

# --- the machine's PostgreSQL, Redis and NATS, reached from the pods ------------------------------
for port in 5432 6379 4222; do
  start "relay-$port" socat "TCP-LISTEN:$port,bind=$IP,fork,reuseaddr" "TCP:127.0.0.1:$port"
done
export IP
envsubst '$IP' < "$ROOT/test/k8s/manifests/addons.yaml" | kubectl apply -f - >/dev/null
kubectl -n kube-system rollout status deploy/coredns --timeout=180s >/dev/null
kubectl -n kube-system rollout status deploy/metrics-server --timeout=180s >/dev/null
wait_for "the metrics API" 120 kubectl top node "$NODE"
log "cluster up with CoreDNS and metrics-server in $(( $(date +%s) - t_all )) s; KUBECONFIG=$R/admin.kubeconfig"
