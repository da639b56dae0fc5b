# Kubeloop developer entry points. Two commands matter:
#   make serve   install what's missing, build, serve the playground on http://127.0.0.1:8080
#   make test    install what's missing, then every check CI runs (CI runs exactly this)
# `make` alone lists all targets. Tool installs are in scripts/install-tools.sh: each is skipped
# when already present, so a warm run costs about a second.

SHELL := bash
# Fail on any error, unset variable, or failure inside a pipe.
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
MAKEFLAGS += --no-builtin-rules --no-print-directory

WASM_TARGET := wasm32-unknown-unknown
# Site root the app is deployed under, e.g. `make build PUBLIC_URL=/kubeloop/` for a subpath.
PUBLIC_URL ?= /
# Where `make build` writes the site (`make build DIST=/tmp/site`); `make e2e` tests it.
DIST ?= dist
# `make serve TRUNK_PROFILE=` serves a debug build (faster rebuilds, much bigger wasm).
TRUNK_PROFILE ?= --release

# Colour for people at a terminal, plain text in CI and in logs (stderr is inherited by $(shell),
# so `test -t 2` tells whether make runs on a terminal). rustfmt ignores CARGO_TERM_COLOR and
# colours even when piped, so it gets --color explicitly.
COLOR := $(if $(CI),never,$(if $(shell test -t 2 && echo tty),auto,never))
export CARGO_TERM_COLOR ?= $(COLOR)
# npm-installed tools first: node_modules/.bin/wasm-opt (binaryen 132) must shadow any system
# wasm-opt (Debian's 108 can't parse rustc 1.95 output); ~/.cargo/bin has trunk + wasm-bindgen.
export PATH := $(CURDIR)/node_modules/.bin:$(HOME)/.cargo/bin:$(PATH)
# Playwright must use Debian's chromium; its own browser download fails on this network.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1
# wasm tests: cargo runs the wasm test binaries through wasm-bindgen-test-runner, which drives
# headless chromium via chromedriver (chrome flags: webdriver.json in the crate root).
WASM_TEST_ENV := CHROMEDRIVER=/usr/bin/chromedriver \
	CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
	WASM_BINDGEN_TEST_TIMEOUT=120

# trunk reports errors through anyhow, which appends a useless 15-line stack backtrace whenever
# RUST_BACKTRACE is set (it is on this machine); keep panics' backtraces, drop those.
TRUNK := RUST_LIB_BACKTRACE=0 trunk

# Prints a banner so each stage of a long log is easy to find.
banner = @printf '\n==> %s\n' "$(1)"

.PHONY: help tools build serve test fmt fmt-check lint clippy clippy-wasm test-native test-wasm e2e verify-rebase bench wasm-heap wasm-profile wasm-parts fuzz fuzz-libfuzzer openapi clean

help: ## List the targets
	@echo "Kubeloop: make <target>"
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{ printf "  %-14s %s\n", $$1, $$2 }'

tools: ## Install missing tools (wasm target, trunk, wasm-bindgen-cli, chromium, npm deps)
	$(call banner,tools)
	@scripts/install-tools.sh

# `make test` checks the tools once and then runs each stage with TOOLS_OK=1.
TOOLS_DEP := $(if $(TOOLS_OK),,tools)

build: $(TOOLS_DEP) ## Release build of the web app into dist/; fails if its download is past budget
	$(call banner,build (trunk, release))
	@# trunk runs cargo --offline (Trunk.toml), so make sure every crate is downloaded first.
	cargo fetch --target $(WASM_TARGET) --quiet
	$(TRUNK) build --offline --release --public-url '$(PUBLIC_URL)' --dist '$(DIST)'
	@# The Content-Security-Policy as a <meta> in dist/index.html and all headers in dist/_headers.
	@node scripts/csp.js '$(DIST)'
	@# The first-paint download, raw and compressed; exits 1 past scripts/size-budget.json's budget.
	@node scripts/size-report.js '$(DIST)'

serve: $(TOOLS_DEP) ## Build and serve the app on http://127.0.0.1:8080, rebuilding on changes
	$(call banner,serve)
	cargo fetch --target $(WASM_TARGET) --quiet
	@echo "Kubeloop will be served at http://127.0.0.1:8080$(PUBLIC_URL) once the first build finishes (Ctrl-C stops)."
	$(TRUNK) serve --offline $(TRUNK_PROFILE) --address 127.0.0.1 --port 8080 --public-url '$(PUBLIC_URL)'

# The full CI pipeline, cheapest checks first, stopping at the first failure.
test: tools ## Everything CI runs: fmt, clippy (native+wasm), native tests, wasm tests, build, e2e
	@t0=$$SECONDS; \
	for step in fmt-check clippy clippy-wasm test-native test-wasm build e2e; do \
	  s=$$SECONDS; $(MAKE) $$step TOOLS_OK=1; echo "[test] $$step took $$((SECONDS - s))s"; \
	done; \
	echo "[test] all checks passed in $$((SECONDS - t0))s"

fmt: ## Format the Rust code
	cargo fmt --all

fmt-check:
	$(call banner,cargo fmt --check)
	cargo fmt --all -- --check --color $(CARGO_TERM_COLOR)

lint: clippy clippy-wasm ## Clippy for both targets, warnings are errors

clippy:
	$(call banner,clippy (native))
	cargo clippy --all-targets -- -D warnings
	@# The counting allocator of `make bench` and `make wasm-heap`, so a measurement build never rots.
	cargo clippy --all-targets --features alloc-stats -- -D warnings
	@# The libFuzzer targets (fuzz/, a workspace of their own that nothing else builds), so an API
	@# change that breaks them fails here rather than at the next `make fuzz-libfuzzer`.
	cargo check --manifest-path fuzz/Cargo.toml --bins --quiet

# --lib --bins: the test targets are native-only apart from tests/wasm*.rs, and the ui module
# only exists on wasm32, so this is the only place it gets linted.
clippy-wasm:
	$(call banner,clippy (wasm32))
	cargo clippy --target $(WASM_TARGET) --lib --bins -- -D warnings
	cargo clippy --target $(WASM_TARGET) --lib --bins --features alloc-stats -- -D warnings

test-native:
	$(call banner,cargo test (native))
	cargo test

# The library's #[wasm_bindgen_test] tests plus tests/wasm*.rs, in headless chromium.
test-wasm:
	$(call banner,cargo test (wasm32 in headless chromium))
	$(WASM_TEST_ENV) cargo test --target $(WASM_TARGET) --lib --test 'wasm*'

# Two servers (playwright.config.js): $(DIST) at the site root, and a copy of it rebased to
# /kubeloop/ (scripts/rebase-dist.js, into $(DIST)-subpath/) served only under that path, for
# tests/e2e/subpath.spec.js. The copy costs a second, not a second release build.
e2e: ## Browser tests (Playwright) against dist/, at / and under /kubeloop/; assumes `make build` ran
	$(call banner,e2e (playwright against $(DIST)/, at / and under /kubeloop/))
	@test -f '$(DIST)/index.html' || { echo "$(DIST)/ is missing: run 'make build' first"; exit 1; }
	E2E_DIST='$(DIST)' E2E_PORT=$$(node scripts/free-port.js) E2E_SUBPATH_PORT=$$(node scripts/free-port.js) playwright test

# The e2e suite's sub-path site is a rebased copy of $(DIST), not a build. This proves the copy is
# what trunk would build (run it after upgrading trunk or editing Trunk.toml): a real release build
# with PUBLIC_URL=/kubeloop/ must equal it byte for byte. Slow: wasm-bindgen and wasm-opt again.
REBASE_CHECK := target/rebase-check
verify-rebase: build ## Check the e2e sub-path copy against a real PUBLIC_URL=/kubeloop/ build (slow)
	$(call banner,verify-rebase (a real sub-path build vs the rebased copy))
	$(TRUNK) build --offline --release --public-url /kubeloop/ --dist '$(REBASE_CHECK)'
	@node scripts/csp.js '$(REBASE_CHECK)' >/dev/null
	node scripts/rebase-dist.js --verify '$(DIST)' '$(REBASE_CHECK)' /kubeloop/

# Wall-clock benchmarks live in the CLI (`kubeloop bench`), not in tests: the machines are shared
# and noisy. `make bench BENCH_ARGS=--quick` for a short run.
BENCH_ARGS ?=
bench: build ## Wall-clock benchmarks, natively (kubeloop bench) and in wasm (headless Chromium)
	$(call banner,bench (native, release))
	cargo run --release --quiet -- bench $(BENCH_ARGS)
	$(call banner,bench (native heap: a counting allocator, where the bytes are, flat over 30 min))
	cargo run --release --quiet --features alloc-stats -- bench --memory $(BENCH_ARGS)
	$(call banner,bench (wasm, the built page in headless Chromium))
	node scripts/browser-bench.js $(BENCH_ARGS)

# The page's live heap, not only its wasm memory's size (which only grows): the converge cases of
# scripts/browser-bench.js on a page built with the counting allocator (feature alloc-stats).
wasm-heap: $(TOOLS_DEP) ## The page's live heap and its peak at 10,000 pods (a page built with a counting allocator)
	$(call banner,wasm heap (a page built with --features alloc-stats))
	cargo fetch --target $(WASM_TARGET) --quiet
	CARGO_TARGET_DIR=target/wasm-heap $(TRUNK) build --offline --release --features alloc-stats --dist target/dist-heap
	@node scripts/csp.js target/dist-heap
	node scripts/browser-bench.js --converge --dist target/dist-heap $(BENCH_ARGS)

# Where the page's time goes (issue #33): the converge cases of scripts/browser-bench.js with
# Chromium's CPU profiler on, on a page whose wasm keeps its function names (wasm-opt -g, from a
# copy of index.html: trunk takes wasm-opt's flags from the page), summed by function.
wasm-profile: $(TOOLS_DEP) ## Chromium CPU profiles of the page's converge cases, summed by wasm function
	$(call banner,wasm profile (a page whose wasm keeps its function names))
	cargo fetch --target $(WASM_TARGET) --quiet
	sed 's/--low-memory-unused"/--low-memory-unused -g"/' index.html > profile.html
	CARGO_TARGET_DIR=target/wasm-profile $(TRUNK) build profile.html --offline --release --dist target/dist-profile; \
	  status=$$?; rm -f profile.html; exit $$status
	@test ! -f target/dist-profile/profile.html || mv target/dist-profile/profile.html target/dist-profile/index.html
	@node scripts/csp.js target/dist-profile
	rm -rf target/cpuprofile
	node scripts/browser-bench.js --converge --dist target/dist-profile --cpuprofile target/cpuprofile $(BENCH_ARGS)
	@for f in target/cpuprofile/*.cpuprofile; do echo "== $$f"; node scripts/cpuprofile-top.js "$$f" --top 25; done

# What each part of the page's wasm costs (issue #33): a web build with v0 symbol mangling, which
# names the types of every generic instantiation, sized by twiggy and summed by part.
wasm-parts: $(TOOLS_DEP) ## Bytes of the page's wasm by part (simulation modules, UI, libraries); needs twiggy
	@command -v twiggy >/dev/null || cargo install --locked twiggy
	RUSTFLAGS=-Csymbol-mangling-version=v0 CARGO_TARGET_DIR=target/wasm-parts cargo build --quiet \
	  --profile wasm-release --target wasm32-unknown-unknown --bin kubeloop
	twiggy top -n 1000000 -f csv target/wasm-parts/wasm32-unknown-unknown/wasm-release/kubeloop.wasm \
	  | node scripts/wasm-parts.js

# Fuzzing. `cargo test` already runs tests/it/fuzz.rs with a few hundred cases per target; `make fuzz`
# runs FUZZ_CASES per target (for an hour or so: FUZZ_CASES=50000). It stays a debug build on
# purpose: the release profile wraps integer overflow silently, and overflows are what it finds.
# A failing case lands in proptest-regressions/fuzz.txt and is replayed first from then on.
FUZZ_CASES ?= 2000
fuzz: ## Longer fuzz run of tests/it/fuzz.rs (FUZZ_CASES=2000 per target); libFuzzer: fuzz-libfuzzer
	FUZZ_CASES=$(FUZZ_CASES) cargo test --test it fuzz:: -- --nocapture

# Coverage-guided fuzzing with libFuzzer (fuzz/README.md): cargo-fuzz needs nightly flags, which
# RUSTC_BOOTSTRAP=1 unlocks on the stable toolchain. FUZZ_TARGET: manifest, share_link, kubectl,
# scenario. FUZZ_TIME in seconds.
FUZZ_TARGET ?= manifest
FUZZ_TIME ?= 300
fuzz-libfuzzer: ## Coverage-guided fuzzing: FUZZ_TARGET=manifest FUZZ_TIME=300 (needs cargo-fuzz)
	@command -v cargo-fuzz >/dev/null || { echo "cargo-fuzz is missing: cargo install cargo-fuzz"; exit 1; }
	RUSTC_BOOTSTRAP=1 cargo fuzz run -a $(FUZZ_TARGET) fuzz/corpus/$(FUZZ_TARGET) \
	  tests/fixtures/manifests tests/fixtures/hostile src/lessons \
	  -- -max_total_time=$(FUZZ_TIME) -dict=fuzz/yaml.dict -max_len=65536

# The built-in kinds' Go types come from the upstream v1.34 OpenAPI definitions, compacted into
# committed files (src/sim/api/openapi/v1.34.json, and www/explain/v1.34.json with the descriptions
# `kubectl explain` fetches on demand); this regenerates them (it downloads the pinned
# kubernetes-validate wheel from PyPI once, into target/openapi-src). An unchanged tree gives no diff.
openapi: ## Regenerate the built-in kinds' schemas from the upstream OpenAPI definitions
	python3 scripts/gen-openapi.py

clean: ## Remove build output (target/, dist/, test results)
	cargo clean
	rm -rf dist dist-subpath test-results playwright-report
