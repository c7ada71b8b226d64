#!/usr/bin/env bash
# Removes the single-node cluster of scripts/kube-up.sh and every trace it left on the host: pods
# (through the CRI, so the CNI plugin releases their addresses), the processes it started (by the
# PIDs it recorded), the kubelet's mounts under /var/lib/kubelet, the kubepods and k8s.io cgroups,
# the bridge, the KUBE-*/CNI-* iptables chains and the nft tables the kubelet and kube-proxy made,
# and the lo address. containerd's image store (/var/lib/containerd) and the certificates stay, so
# the next kube-up is fast.
#
#   bash scripts/kube-down.sh          # stop and clean up
#   bash scripts/kube-down.sh --wipe   # also delete etcd's data, /var/lib/kubelet, the CNI IP state
#                                      # and the certificates (the next kube-up starts from nothing)
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.tools/kube/bin"
R="$ROOT/.tools/kube/run"
IP=172.31.255.1
SOCK="$R/run/containerd/containerd.sock"
export PATH="$BIN:$PATH"
log() { printf '[kube-down %s] %s\n' "$(date +%T)" "$*" >&2; }
t0=$(date +%s)
[[ $EUID -eq 0 ]] || { log "run as root"; exit 1; }

stop() { # <name>: TERM the recorded PID (its process group: kubelet runs under unshare/sh), wait, KILL
  local f="$R/pids/$1" pid
  [[ -f "$f" ]] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 60; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

stop kubelet
# Pod network namespaces hidden under a /run/netns stacked onto itself after they were made (see
# kube-up.sh) cannot be removed by containerd: take the stack down to the directory first, so that it
# sees them and stopping their sandboxes below succeeds.
# (such a namespace is listed twice, or its path shows the directory's file system, not nsfs).
hidden=0
while read -r n target; do
  if (( n > 1 )) || [[ $(stat -f -c %T "$target" 2>/dev/null) != nsfs ]]; then hidden=1; fi
done < <(awk '$5 ~ "^/run/netns/cni-" { print $5 }' /proc/self/mountinfo | sort | uniq -c)
if (( hidden )); then
  while mountpoint -q /run/netns; do umount -l /run/netns || break; done
  log "unstacked /run/netns (pod network namespaces were hidden under a copy)"
fi
if [[ -S "$SOCK" ]] && [[ -f "$R/pids/containerd" ]]; then
  # One stopp per pod with a long timeout: the 2 s default is shorter than some pods' grace period.
  for p in $(crictl --runtime-endpoint "unix://$SOCK" pods -q 2>/dev/null); do
    crictl --runtime-endpoint "unix://$SOCK" --timeout 60s stopp "$p" >/dev/null 2>&1
  done
  crictl --runtime-endpoint "unix://$SOCK" --timeout 60s rmp -fa >/dev/null 2>&1
fi
stop kube-proxy
[[ -x "$BIN/kube-proxy" ]] && kube-proxy --cleanup >/dev/null 2>&1
for p in relay-5432 relay-6379 relay-4222 kube-scheduler kube-controller-manager kube-apiserver etcd containerd; do stop "$p"; done

# Mounts the kubelet made (secret/configMap tmpfs, pod volumes), deepest first, then the bind mount.
findmnt -rn -o TARGET | grep '^/var/lib/kubelet' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
# containerd's sandbox/rootfs mounts, if any survived.
findmnt -rn -o TARGET | grep -e '^/run/containerd/io.containerd' -e "^$R/run/containerd-state" | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done

# cgroups (v1 hierarchies and the v2 unified one): kubepods and containerd's k8s.io trees, leaves first.
for root in /sys/fs/cgroup/*/ /sys/fs/cgroup/unified/; do
  for top in kubepods kubepods.slice k8s.io; do
    [[ -d "$root$top" ]] && find "$root$top" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
done

# What containerd could not release: pod network namespaces still mounted, and their files.
for f in /run/netns/cni-*; do
  [[ -e "$f" ]] || continue
  while [[ $(stat -f -c %T "$f" 2>/dev/null) == nsfs ]]; do umount -l "$f" || break; done
  rm -f "$f"
done
ip link show ghkube0 >/dev/null 2>&1 && ip link delete ghkube0
# What kube-proxy --cleanup leaves: the kubelet's own chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY, ...)
# and the CNI portmap/bridge chains.
for table in filter nat mangle; do
  iptables -t "$table" -S 2>/dev/null | grep -E '^-A .*(KUBE-|CNI-)' | sed 's/^-A/-D/' | while read -r rule; do
    eval "iptables -t $table $rule" 2>/dev/null
  done
  iptables -t "$table" -S 2>/dev/null | awk '/^-N (KUBE-|CNI-)/ { print $2 }' | while read -r c; do
    iptables -t "$table" -F "$c" 2>/dev/null; done
  iptables -t "$table" -S 2>/dev/null | awk '/^-N (KUBE-|CNI-)/ { print $2 }' | while read -r c; do
    iptables -t "$table" -X "$c" 2>/dev/null; done
done
ip6tables -S >/dev/null 2>&1 && for table in filter nat mangle; do
  ip6tables -t "$table" -S 2>/dev/null | grep -E '^-A .*(KUBE-|CNI-)' | sed 's/^-A/-D/' | while read -r rule; do
    eval "ip6tables -t $table $rule" 2>/dev/null; done
  ip6tables -t "$table" -S 2>/dev/null | awk '/^-N (KUBE-|CNI-)/ { print $2 }' | while read -r c; do
    ip6tables -t "$table" -F "$c" 2>/dev/null; ip6tables -t "$table" -X "$c" 2>/dev/null; done
done
# nft tables kube-proxy (nftables probing) and the kubelet created, when empty of our chains.
if command -v nft >/dev/null; then
  for t in "ip kube-proxy" "ip6 kube-proxy"; do nft list table $t >/dev/null 2>&1 && nft delete table $t; done
fi

ip addr show dev lo | grep -q "inet $IP/32" && ip addr del "$IP/32" dev lo

if [[ "${1:-}" == "--wipe" ]]; then
  rm -rf "$R/data" /var/lib/kubelet "$R/pki" "$R/admin.kubeconfig" "$R/conf"
  log "wiped etcd data, /var/lib/kubelet, CNI state and certificates"
fi
log "cluster down in $(( $(date +%s) - t0 )) s"
