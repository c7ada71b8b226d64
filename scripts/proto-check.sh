#!/usr/bin/env bash
# Checks proto/ (STYLE §10): `buf lint` with buf.yaml's rules, then `buf breaking` (FILE rules)
# against the protos on the local branch `main`.
#
# The breaking check needs that branch. CI's fresh clones fetch it, and so does a developer's
# checkout; a shallow or single-branch clone (or a source tarball) has no `main`, and there the
# check is skipped with a note instead of failing on a missing ref: there is nothing to compare
# with. On `main` itself it compares main with itself and passes.
set -euo pipefail
cd "$(dirname "$0")/.."

npx --no-install buf lint

if git show-ref --verify --quiet refs/heads/main; then
  npx --no-install buf breaking proto --against '.git#branch=main,subdir=proto'
else
  echo "proto-check: no local branch 'main' to compare with; skipped buf breaking" >&2
fi
