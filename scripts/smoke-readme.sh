#!/usr/bin/env bash
# Checks the README's first command on a fresh clone: install, start all-in-one on embedded SQLite,
# then sign up (the MFA offer), skip MFA setup, log in and read the profile with curl (issue 2, "a fresh clone"). Stops the server
# it started, by PID. Usage: bash scripts/smoke-readme.sh [port]
set -euo pipefail
PORT="${1:-18080}"
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$(mktemp -d)"
git clone -q "$SRC" "$DIR/gatehouse"
cd "$DIR/gatehouse"
npm install --no-audit --no-fund >"$DIR/install.log" 2>&1
# The README's command is `npm install && npm start`; the port is moved off 8080 so a running
# instance does not interfere (later flags win).
# setsid: npm, its shell and the server share one new process group, stopped together on exit.
setsid npm start -- --http-port="$PORT" --grpc-port=$((PORT + 1)) --metrics-port=$((PORT + 2)) >"$DIR/server.log" 2>&1 &
NPM_PID=$!
trap 'kill -TERM -- "-$NPM_PID" 2>/dev/null || true; sleep 1; rm -rf "$DIR"' EXIT
for _ in $(seq 1 60); do curl -fs "http://localhost:$PORT/healthz" >/dev/null 2>&1 && break; sleep 1; done
URL="http://localhost:$PORT"
curl -fsS -X POST "$URL/v1/signup" -H "Origin: $URL" -c "$DIR/cookies.txt" \
  -d '{"email":"ada@example.com","password":"Passw0rd!x","confirm_password":"Passw0rd!x"}' | grep -q '"message":"Proceed to mfa setup"'
curl -fsS -X POST "$URL/v1/skip_mfa_setup" -H "Origin: $URL" -b "$DIR/cookies.txt" -c "$DIR/cookies.txt" | grep -q '"message":"MFA setup skipped"'
curl -fsS -X POST "$URL/v1/login" -H "Origin: $URL" -c "$DIR/cookies.txt" \
  -d '{"email":"ada@example.com","password":"Passw0rd!x"}' | grep -q '"message":"Logged in successfully"'
curl -fsS "$URL/v1/profile" -b "$DIR/cookies.txt" | grep -q '"email":"ada@example.com"'
echo "README smoke: install, start, signup, login and profile OK on $URL"
