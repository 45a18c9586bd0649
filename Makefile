# Every target creates .venv on first use, so a fresh machine needs only Python 3.11+ and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.docs-installed
EXAMPLE ?= examples/quickstart
SHARED ?= ../shared

.PHONY: render plan test docs docs-serve lint typecheck unit bench fix clean package

# setuptools warns on every editable install of a package-dir layout that folders named like a
# package may shadow it; none does here (the packages live under lib/ and functions/), so the
# notice would only alarm a first install.
QUIET_SETUPTOOLS := PYTHONWARNINGS='ignore:Editable installation:UserWarning'

# Set-up messages go to stderr so `make render` prints nothing but the YAML stream on stdout.
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required")'
	@echo "make: installing the project and its dev tools into $(VENV)" >&2
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip >&2
	@$(QUIET_SETUPTOOLS) $(BIN)/python -m pip install --quiet -e '.[dev]' >&2
	@touch $(STAMP)

render: $(STAMP)
	@$(BIN)/modelplane render $(EXAMPLE)/xr.yaml --required-resources $(EXAMPLE)/required-resources.yaml \
		$$(test -f $(EXAMPLE)/observed-resources.yaml && echo --observed-resources $(EXAMPLE)/observed-resources.yaml) --explain

# The fleet plan of several deployments (text); PLAN=<dir> plans another directory.
PLAN ?= examples/fleet-plan
plan: $(STAMP)
	@$(BIN)/modelplane plan $(PLAN) --allow-partial

# The checks live in scripts/checks.sh so CI (through make) and the Nix flake run the same commands.
test: $(STAMP)
	bash scripts/checks.sh all

# The documentation site: MkDocs + Material into site/, strictly (a broken link or page fails).
$(DOCS_STAMP): $(STAMP)
	@echo "make: installing the documentation tools into $(VENV)" >&2
	@$(QUIET_SETUPTOOLS) $(BIN)/python -m pip install --quiet -e '.[dev,docs]' >&2
	@touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

docs-serve: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

lint: $(STAMP)
	bash scripts/checks.sh lint
	bash scripts/checks.sh format

typecheck: $(STAMP)
	bash scripts/checks.sh typecheck

unit: $(STAMP)
	bash scripts/checks.sh unit

# Scaling table against the design targets, what other tenants' demand costs a call, placement
# quality against exact optima, then concurrent load and memory over 10,000 calls.
bench: $(STAMP)
	$(BIN)/python -m tests.benchmarks.bench
	$(BIN)/python -m tests.benchmarks.blocked
	$(BIN)/python -m tests.benchmarks.stamps
	$(BIN)/python -m tests.benchmarks.quality
	$(BIN)/python -m tests.benchmarks.quality --packing Devices
	$(BIN)/python -m tests.benchmarks.load --clients 8 --requests 2000 --soak 10000

fix: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache site

# Runtime image + Crossplane xpkg under _output/; needs a Docker daemon and the crossplane CLI.
package:
	bash scripts/package.sh
