#!/usr/bin/env bash
# Installs Debian's chromium for the browser tests (passkeys through the CDP virtual authenticator,
# driven by playwright-core with executablePath /usr/bin/chromium; TOOLCHAIN.md "Services in tests").
# Idempotent: does nothing when /usr/bin/chromium exists. CI runs as root; elsewhere sudo is used
# when it is there without a password.
set -euo pipefail

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
  echo "chromium already installed: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
  exit 0
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    echo "install-chromium: $CHROMIUM is missing and this user cannot install packages; run 'apt-get install -y chromium' as root" >&2
    exit 1
  fi
fi

start=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
# dpkg's lock may be held by another install on a shared machine: wait for it rather than fail
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium >/dev/null
echo "chromium installed in $(( $(date +%s) - start ))s: $("$CHROMIUM" --version)"
