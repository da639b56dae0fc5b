#!/usr/bin/env bash
# Installs every tool `make build` / `make test` need, skipping whatever is already there.
#
# Idempotent and non-interactive: each step first checks (cheaply) whether its tool is present
# at the right version, so a warm run takes about a second. Safe to run as root (CI) or as a
# user with sudo (only the apt step needs it). Each step prints how long it took.
#
# Versions are pinned here or read from the repo, never guessed:
#   trunk            TRUNK_VERSION (0.22 needs a newer rustc than 1.95)
#   wasm-bindgen-cli the `wasm-bindgen` version in Cargo.lock (CLI and library must match exactly)
#   wasm-opt         npm `binaryen` from package-lock.json (Debian's binaryen 108 can't read rustc 1.95 output)
#   chromium         Debian's chromium + chromium-driver (browser downloads are blocked here)
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION="${TRUNK_VERSION:-0.21.14}"
WASM_TARGET=wasm32-unknown-unknown
export PATH="$HOME/.cargo/bin:$PATH"
# Never let npm packages fetch browsers: that download fails on this network.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
# Build CLI tools with a cheap release profile: LTO + 1 codegen unit (trunk's own profile)
# roughly doubles the install time on 2 cores for no benefit to us.
export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16

log() { printf '[tools] %s\n' "$*"; }

# step NAME CHECK-CMD INSTALL-CMD: runs INSTALL-CMD only if CHECK-CMD fails, then re-checks.
step() {
  local name=$1 check=$2 install=$3 t0
  if eval "$check" >/dev/null 2>&1; then
    log "$name: ok"
    return
  fi
  log "$name: installing..."
  t0=$SECONDS
  eval "$install"
  eval "$check" >/dev/null 2>&1 || { log "$name: still missing after install"; exit 1; }
  log "$name: installed in $((SECONDS - t0))s"
}

# Root runs apt directly; anyone else goes through sudo.
SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO="sudo"

command -v cargo >/dev/null || { log "cargo not found: install Rust with rustup first"; exit 1; }
command -v node >/dev/null && command -v npm >/dev/null || { log "node/npm not found: install Node.js 20+"; exit 1; }

# --- Rust: wasm target + the components `make test` uses --------------------------------------
step "rust $WASM_TARGET target" \
  "rustup target list --installed | grep -qx $WASM_TARGET" \
  "rustup target add $WASM_TARGET"
step "rustfmt + clippy" \
  "cargo fmt --version && cargo clippy --version" \
  "rustup component add rustfmt clippy"

# --- Cargo.lock: the wasm-bindgen version below is read from it --------------------------------
step "Cargo.lock" "test -f Cargo.lock" "cargo generate-lockfile"
WASM_BINDGEN_VERSION=$(scripts/wasm-bindgen-version.sh)

# --- trunk ----------------------------------------------------------------------------------------
step "trunk $TRUNK_VERSION" \
  "trunk --version | grep -qx 'trunk $TRUNK_VERSION'" \
  "cargo install trunk --version $TRUNK_VERSION --locked --force"

# --- wasm-bindgen-cli (also provides wasm-bindgen-test-runner) ----------------------------------
# Installed without --locked: that is the combination verified to build on rustc 1.95.
step "wasm-bindgen-cli $WASM_BINDGEN_VERSION" \
  "wasm-bindgen --version | grep -qx 'wasm-bindgen $WASM_BINDGEN_VERSION' && wasm-bindgen-test-runner --version | grep -q '$WASM_BINDGEN_VERSION'" \
  "cargo install wasm-bindgen-cli --version $WASM_BINDGEN_VERSION --force"

# --- Chromium + ChromeDriver (Playwright e2e and wasm-bindgen-test-runner) ----------------------
# --no-install-recommends keeps this to the browser itself (recommends pull in printing, upower,
# ...); fonts-liberation is the one recommend we want, so screenshots have real glyphs.
# DPkg::Lock::Timeout waits for another apt run (e.g. unattended upgrades) instead of failing.
step "chromium + chromedriver" \
  "test -x /usr/bin/chromium && test -x /usr/bin/chromedriver" \
  "$SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq &&
   $SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium chromium-driver fonts-liberation"

# --- npm devDependencies: @playwright/test, binaryen (wasm-opt) ---------------------------------
# `npm ci` wipes node_modules, so skip it while the installed tree matches package-lock.json
# (npm writes a copy of the lock as node_modules/.package-lock.json; we keep our own stamp).
step "npm devDependencies" \
  "cmp -s package-lock.json node_modules/.kubeloop-lock-stamp && test -x node_modules/.bin/wasm-opt && test -x node_modules/.bin/playwright" \
  "npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.kubeloop-lock-stamp"

log "all tools present"
