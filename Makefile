# Two commands: `make demo` and `make test`. Each creates .venv, builds the Rust core (wwho._core,
# optimized, through maturin; PROFILE below) into it and installs what it needs: the demo only wwho's own
# dependencies, the tests their extras too. `make check` is the fast tier for daily work. A source
# build needs cargo.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
HASH   := $(shell cat pyproject.toml rust/Cargo.toml | cksum | cut -d' ' -f1)
STAMP  := $(VENV)/.installed-$(HASH)
TESTS  := $(VENV)/.installed-test-$(HASH)
# The cargo profile of the core: dev-release (rust/Cargo.toml) for the developer loop, a shorter
# compile; `make PROFILE=release ...` builds it as the wheels are (fat LTO, one codegen unit).
PROFILE ?= dev-release
CORE   := $(VENV)/.core-built-$(PROFILE)
DEVELOP := VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --profile $(PROFILE) --quiet
RUST   := $(shell find rust/src -name '*.rs') rust/Cargo.toml
CARGO  := cargo --quiet

# The test extras of pyproject.toml, one requirement a line (tomli before Python 3.11).
export EXTRAS_TEST := import sys; toml = __import__('tomllib' if sys.version_info >= (3, 11) else 'tomli'); \
	print(*toml.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['test'], sep='\n')

.PHONY: demo test test-deps check test-rust venv bench joint-indic fuzz clean

# wwho itself (editable: src/ is what runs) and its run-time dependencies; one build of the core.
$(STAMP): pyproject.toml rust/Cargo.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip "maturin>=1.8,<2"
	$(DEVELOP)
	@rm -f $(VENV)/.installed-[0-9]* $(VENV)/.core-built*; touch $(STAMP) $(CORE)

# The test extras (pytest, ruff, transformers, ray, playwright, ...) only for the tests, read from
# pyproject.toml and installed by pip alone, so that they install while cargo builds and checks.
$(TESTS): $(STAMP)
	$(PY) -c "$$EXTRAS_TEST" > $(VENV)/requirements-test.txt
	$(PY) -m pip install --quiet -r $(VENV)/requirements-test.txt
	@rm -f $(VENV)/.installed-test-*; touch $(TESTS)

# Rebuild the extension when the Rust sources change (the editable install does not watch them).
# Not when $(STAMP) has just built it: make decided to remake $(CORE) when it did not exist yet, and
# does not look again once $(STAMP)'s recipe has made it (which would build the core a second time).
$(CORE): $(STAMP) $(RUST)
	@if [ ! -e $(CORE) ] || [ -n "$$(find $(RUST) -newer $(CORE) -print -quit)" ]; then \
		echo "$(DEVELOP) --skip-install"; $(DEVELOP) --skip-install; fi
	@rm -f $(VENV)/.core-built*; touch $(CORE)

venv: $(CORE) $(TESTS)

demo: $(CORE)
	$(PY) -m wwho.demo

# The crate's tests in dev-release (overflow checks and debug assertions on for wwho's code): its
# dependencies are the ones the extension's build compiled. Clippy checks the examples compile.
test-rust:
	$(CARGO) fmt --manifest-path rust/Cargo.toml --check
	$(CARGO) clippy --manifest-path rust/Cargo.toml --all-targets -- -D warnings
	$(CARGO) clippy --manifest-path rust/Cargo.toml --all-targets --features python -- -D warnings
	$(CARGO) test --manifest-path rust/Cargo.toml --lib --profile dev-release

# pip installs the test extras (mostly one core) while cargo builds and checks the crate.
test-deps:
	@$(MAKE) --no-print-directory -j3 $(CORE) $(TESTS) test-rust

# --dist loadfile: one worker runs each module, so that its module fixtures (trained models, a
# server, a Ray cluster) are built once (--dist loadgroup no longer groups with pytest 9.2:
# pytest-xdist issue 1386); the longest first, as tests/module_order.txt lists them.
test: test-deps
	$(VENV)/bin/ruff check src tests benchmarks fuzz
	$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder -q

# The fast tier: every module's tests but the whole-corpus ones (marked slow), no cargo.
check: $(CORE) $(TESTS)
	$(VENV)/bin/ruff check src tests benchmarks fuzz
	$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder -q -m "not slow"

# Benchmarks measure the core as the wheels build it.
bench:
	$(MAKE) PROFILE=release venv
	$(PY) benchmarks/run_all.py

# One joint Indic tokenizer: SGPE 64k on a temperature-balanced mixture of 13 Indic
# languages plus English, against SentencePiece BPE 64k on the same mixture and o200k_base, Llama 3,
# Qwen2 on FLORES; HF export and meta checks. Cached in .cache/bench_joint/ (docs/joint-indic.md).
joint-indic: $(CORE) $(TESTS)
	$(PY) benchmarks/bench_joint.py

# The Python fuzzers of fuzz/, a minute each: every loader on mutated saved files, and the core's
# SGPE and training entry points. `fuzz/run_cargo.sh` runs the cargo-fuzz targets (fuzz/cargo/;
# needs a nightly toolchain and cargo-fuzz).
fuzz: $(CORE) $(TESTS)
	$(PY) fuzz/loaders.py --seconds 60
	$(PY) fuzz/sgpe_core.py --seconds 60

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build src/*.egg-info rust/target src/wwho/_core*.so
