#!/usr/bin/env bash
# Runs the README's quickstart on a fresh clone (issue 15: "scripts/smoke-readme.sh runs every command
# of the README quickstart and checks the answers"): `npm install && npm start`, then every ```sh block
# of the quickstart as the README writes it (only the ports are moved off 8080/9091, so a running
# instance does not interfere; run from the clone's root, as a reader would), checking each block's answers. Stops the server it started, by its
# process group. Usage: bash scripts/smoke-readme.sh [port]
set -euo pipefail
PORT="${1:-18080}"
GRPC=$((PORT + 1))
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$(mktemp -d)"
git clone -q "$SRC" "$DIR/gatehouse"
cd "$DIR/gatehouse"
npm install --no-audit --no-fund >"$DIR/install.log" 2>&1
bash scripts/install-grpcurl.sh >"$DIR/grpcurl.log" 2>&1 || cp -r "$SRC/.tools" . # the gRPC block needs it
# setsid: npm, its shell and the server share one new process group, stopped together on exit.
setsid npm start -- --http-port="$PORT" --grpc-port="$GRPC" --metrics-port=$((PORT + 2)) >"$DIR/server.log" 2>&1 &
NPM_PID=$!
trap 'kill -TERM -- "-$NPM_PID" 2>/dev/null || true; sleep 1; rm -rf "$DIR"' EXIT
for _ in $(seq 1 60); do curl -fs "http://localhost:$PORT/readyz" >/dev/null 2>&1 && break; sleep 1; done

# The quickstart's sh blocks (between the first block, the two commands, and "## Running it"),
# one file each, with the ports moved.
awk '/^## /{exit} /^```sh$/{n++; if (n>1) {f=sprintf("'"$DIR"'/block%d.sh", n-1); inb=1}; next} /^```$/{inb=0; next} inb{print > f}' README.md
# What each block must answer, in order: signup..profile, GraphQL, gRPC, permissions, the token checked
# with jose against the JWKS. test/e2e/readme.e2e.test.ts runs the same blocks in the test suite.
EXPECT=(
  '"message":"Proceed to mfa setup"|"message":"MFA setup skipped"|"message":"Logged in successfully"|"email":"ada@example.com"'
  '"is_sign_up_enabled":true'
  'gatehouse.authn.v1.AuthnService|"message": "Logged in successfully"'
  '"allowed":true|"allowed":false'
  'RS256 ada@example.com'
)
[ -f "$DIR/block${#EXPECT[@]}.sh" ] && [ ! -f "$DIR/block$(( ${#EXPECT[@]} + 1 )).sh" ] \
  || { echo "README smoke: expected ${#EXPECT[@]} quickstart blocks, found $(ls "$DIR"/block*.sh | wc -l)" >&2; exit 1; }
for i in "${!EXPECT[@]}"; do
  block="$DIR/block$((i + 1)).sh"
  sed -i "s/localhost:8080/localhost:$PORT/g; s/localhost:9091/localhost:$GRPC/g" "$block"
  out="$(bash -e "$block" 2>&1)" || { echo "README smoke: block $((i + 1)) failed:"; cat "$block"; echo "$out"; exit 1; } >&2
  IFS='|' read -ra needles <<<"${EXPECT[$i]}"
  for needle in "${needles[@]}"; do
    grep -qF -- "$needle" <<<"$out" || { echo "README smoke: block $((i + 1)) did not answer $needle:"; cat "$block"; echo "$out"; exit 1; } >&2
  done
  echo "README smoke: block $((i + 1)) OK"
done
echo "README smoke: install, start and every quickstart command OK on http://localhost:$PORT"
