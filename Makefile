# The two commands the README opens with: `make demo` and `make test`.
# Both create .venv themselves; `make test` also starts (and stops) the servers tests need.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check -q
RUNTIME := $(VENV)/.installed-runtime
DEV := $(VENV)/.installed-dev
TYPECHECK := build/typecheck

SIDE_VENVS := phoenix adk llama-index strands crewai frameworks semantic-kernel
# Jaeger and the OpenTelemetry Collector built from the Go module proxy, Apache Jena
# Fuseki fetched from Maven Central: each once per machine, into ~/.cache/otel-prov/engines/.
ENGINES := build-jaeger build-otelcol fetch-fuseki
# pytest-xdist's workers for `make test` (tests/conftest.py: how the suite is shared out).
TEST_WORKERS ?= auto

.PHONY: demo test checks servers installs engines $(ENGINES) debian-packages \
	$(SIDE_VENVS:%=side-venv-%) lint typecheck docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(RUNTIME): pyproject.toml | $(BIN)/python
	$(PIP) install -e .
	touch $@

$(DEV): pyproject.toml | $(BIN)/python
	$(PIP) install -e '.[dev]'
	touch $@ $(RUNTIME)

demo: $(RUNTIME)
	$(BIN)/otel-prov demo

# The integration tests start Oxigraph's server (from PyPI, in .venv), Virtuoso (from
# Debian's packages, installed here when missing) and Arize Phoenix as a real OTLP
# receiver (in its own venv, cached in .cache/phoenix-venv) in temporary directories; the
# browser tests of `otel-prov serve` drive Debian's chromium through its chromedriver;
# tests/engines/ (and Fuseki's runs of the SPARQL tests) run the engines.
# The checks and installs run side by side (most of their time is spent waiting for
# downloads and the disk; make stops at the first that fails, with its output), then
# pytest on TEST_WORKERS workers. The engines build in the background meanwhile, their
# output in build/engines.log (pytest's summary says how long each took): minutes on a
# fresh machine, nothing once cached. tests/engines/ is scheduled last and waits for them;
# a test whose engine failed to build fails with the build's output.
test:
	@mkdir -p build
	@$(MAKE) --no-print-directory --jobs --output-sync=target engines >build/engines.log 2>&1 & \
	engines=$$!; \
	$(MAKE) --no-print-directory --jobs --output-sync=target checks installs \
		&& OTEL_PROV_ENGINES_LOG=build/engines.log \
		$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile; \
	status=$$?; wait $$engines; exit $$status

checks: lint typecheck docs

servers: installs engines

installs: debian-packages $(SIDE_VENVS:%=side-venv-%)

engines: $(ENGINES)

$(ENGINES):
	bash scripts/$@.sh

# One after the other: two apt-gets at once would fight over dpkg's lock.
debian-packages:
	bash scripts/install-virtuoso.sh
	bash scripts/install-chromium.sh

$(SIDE_VENVS:%=side-venv-%): side-venv-%:
	bash scripts/$*-venv.sh

lint: $(DEV)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy cannot follow setuptools' package-dir mapping, so check a tree of links laid
# out as the installed package is.
typecheck: $(DEV)
	rm -rf $(TYPECHECK) && mkdir -p $(TYPECHECK)/otel_prov
	ln -s $(CURDIR)/otel_prov/* $(TYPECHECK)/otel_prov/
	ln -s $(CURDIR)/exporters $(TYPECHECK)/otel_prov/exporters
	ln -s $(CURDIR)/semconv $(TYPECHECK)/otel_prov/semconv
	cd $(TYPECHECK) && $(CURDIR)/$(BIN)/mypy --config-file $(CURDIR)/pyproject.toml -p otel_prov

# The configuration tables are generated from otel_prov/environment_variables.py.
docs: $(DEV)
	$(BIN)/python scripts/configuration_doc.py --check
	$(BIN)/python scripts/support_matrix.py --check
	$(BIN)/python scripts/sparql_recipes.py --check
	$(BIN)/mkdocs build --strict --quiet

bench: $(DEV)
	for b in benchmarks/bench_*.py; do $(BIN)/python -m benchmarks.$$(basename $$b .py) || exit 1; done

clean:
	rm -rf $(VENV) build .cache .pytest_cache .mypy_cache .ruff_cache .hypothesis .otel-prov
