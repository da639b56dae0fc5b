#!/usr/bin/env bash
# Prints the wasm-bindgen version locked in Cargo.lock: the single source of truth for the
# wasm-bindgen-cli version (CLI and library must match exactly, or trunk/test-runner refuse).
set -euo pipefail
cd "$(dirname "$0")/.."
v=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)
[[ -n "$v" ]] || { echo "wasm-bindgen not found in Cargo.lock" >&2; exit 1; }
echo "$v"
