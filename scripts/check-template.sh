#!/usr/bin/env bash
# Builds, tests and runs the templates as a user would: each from a copy outside the workspace,
# with its path dependencies (../../dynasoar, ../../dynasoar-build) rewritten to this checkout.
#
#   scripts/check-template.sh [TEMPLATE...]     (default: every folder of templates/)
#
# STEPS (default 100) sets the app's --steps. The copies build into CARGO_TARGET_DIR (default:
# this checkout's target/) with the workspace's Cargo.lock, so they reuse the dependencies the
# workspace build compiled.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
steps="${STEPS:-100}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

templates=("$@")
if [[ ${#templates[@]} -eq 0 ]]; then
  for dir in "$root"/templates/*/; do templates+=("$(basename "$dir")"); done
fi

for name in "${templates[@]}"; do
  start=$SECONDS
  copy="$work/$name"
  cp -r "$root/templates/$name" "$copy"
  rm -rf "$copy/target" "$copy/Cargo.lock"
  sed -i "s|path = \"\.\./\.\./|path = \"$root/|g" "$copy/Cargo.toml"
  if grep -q 'path = "\.\.' "$copy/Cargo.toml"; then
    echo "check-template: $name: a relative path dependency is left in Cargo.toml" >&2
    exit 1
  fi
  cp "$root/Cargo.lock" "$copy/Cargo.lock"
  echo "check-template: $name (copied to $copy)"
  (
    cd "$copy"
    cargo test
    cargo run --release -- --backend cpu --steps "$steps"
  )
  echo "check-template: $name passed in $((SECONDS - start)) s"
done
