#!/usr/bin/env bash
# podman, as podman-compose 1.0.3 (Debian 12's) should call it for compose.yaml: that release adds
# `--net <project>_default --network-alias <service>` to every `podman run`, even next to the
# `--network host` it renders from `network_mode: host`, and podman refuses the pair ("cannot set
# multiple networks without bridge network mode"). This drops those two options when `--network host`
# is present and passes everything else to podman unchanged. Use:
#   podman-compose --podman-path scripts/podman/compose-podman.sh up -d
set -euo pipefail
host=0
for ((i = 1; i <= $#; i++)); do
  if [[ "${!i}" == "--network" ]]; then j=$((i + 1)); [[ "${!j:-}" == "host" ]] && host=1; fi
done
args=()
while (($#)); do
  if ((host)) && [[ "$1" == "--net" || "$1" == "--network-alias" ]]; then shift 2; continue; fi
  args+=("$1"); shift
done
exec podman "${args[@]}"
