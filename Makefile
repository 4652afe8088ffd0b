# Two commands: `make demo` and `make test`. Each creates .venv, builds the Rust core (wwho._core,
# release mode, through maturin) into it and installs what it needs. A source build needs cargo.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml rust/Cargo.toml | cksum | cut -d' ' -f1)
CORE   := $(VENV)/.core-built
RUST   := $(shell find rust/src -name '*.rs') rust/Cargo.toml
CARGO  := cargo --quiet

.PHONY: demo test test-rust venv bench clean

$(STAMP): pyproject.toml rust/Cargo.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	@rm -f $(VENV)/.installed-*; touch $(STAMP)

# Rebuild the extension when the Rust sources change (pip's editable install does not watch them).
$(CORE): $(STAMP) $(RUST)
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --quiet --skip-install
	@touch $(CORE)

venv: $(CORE)

demo: $(CORE)
	$(PY) -m wwho.demo

test-rust:
	$(CARGO) fmt --manifest-path rust/Cargo.toml --check
	$(CARGO) clippy --manifest-path rust/Cargo.toml --all-targets -- -D warnings
	$(CARGO) clippy --manifest-path rust/Cargo.toml --all-targets --features python -- -D warnings
	$(CARGO) test --manifest-path rust/Cargo.toml

test: $(CORE) test-rust
	$(VENV)/bin/ruff check src tests benchmarks
	$(PY) -m pytest -n 2 --dist loadgroup -q

bench: $(CORE)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build src/*.egg-info rust/target src/wwho/_core*.so
