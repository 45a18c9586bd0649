# Every target creates .venv on first use, so a fresh machine needs only Python 3.11+ and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXAMPLE ?= examples/quickstart
SHARED ?= ../shared

.PHONY: render test lint typecheck unit bench fix clean

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

render: $(STAMP)
	$(BIN)/modelplane render $(EXAMPLE)/xr.yaml --required-resources $(EXAMPLE)/required-resources.yaml \
		$$(test -f $(EXAMPLE)/observed-resources.yaml && echo --observed-resources $(EXAMPLE)/observed-resources.yaml) --explain

test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/pyright

unit: $(STAMP)
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python -m tests.benchmarks.bench

fix: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

# Runtime image + Crossplane xpkg under _output/; needs a Docker daemon and the crossplane CLI.
.PHONY: package
package:
	bash scripts/package.sh
