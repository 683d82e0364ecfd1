# Bare `make` lists the jobs.
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
# Test processes (pytest-xdist); 0 runs the tests in make's own pytest process. A test file stays in one process.
PYTEST_WORKERS ?= 2
# Where the site serves its client wheel from (the NVMEDB_CLIENT_WHEEL_DIR setting's default).
CLIENT_WHEEL_DIR ?= $(or $(NVMEDB_CLIENT_WHEEL_DIR),$(or $(NVMEDB_VAR_DIR),var)/client)
CLIENT_SOURCES := client/pyproject.toml client/README.md client/LICENSE $(shell find client/src -name '*.py' -o -name '*.json')

.PHONY: help run test lint format bench bench-smoke
help:
	@echo "make run    - set up, build the client wheel, migrate, start the site and a task worker on http://127.0.0.1:$(PORT)/"
	@echo "make test   - set up and run every test (services not running are skipped locally, never in CI)"
	@echo "make lint   - ruff check and format check, and the structure check (scripts/check_structure.py)"
	@echo "make format - ruff format and fix"
	@echo "make bench  - run the benchmark scripts in bench/; fails if any missed a goal or crashed"
	@echo "make bench-smoke - every benchmark at a tiny size (BENCH_SMOKE=1): fails only if one crashed"

$(VENV)/.installed: requirements.txt requirements-dev.txt client/pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

# The wheel the site serves at /client/, rebuilt when the client's sources change.
$(CLIENT_WHEEL_DIR)/.built: $(VENV)/.installed $(CLIENT_SOURCES)
	bash scripts/build-client-wheel.sh $(CLIENT_WHEEL_DIR)
	touch $@

run: $(VENV)/.installed $(CLIENT_WHEEL_DIR)/.built
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_launch_sample
	bash scripts/run-dev.sh $(PORT)

test: $(VENV)/.installed
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) scripts/check_structure.py

format: $(VENV)/.installed
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# Every script runs, whatever the ones before it said; then the target fails if any exited non-zero: a missed goal
# (bench/_report.py) or a crash. bench-smoke (BENCH_SMOKE=1) runs each at a tiny size, on a fresh database of its
# own: the verdicts are printed but cannot judge the goals, so it fails on a crash only.
BENCH_SCRIPTS := $(sort $(wildcard bench/[!_]*.py))
define run_benchmarks
	@failed=""; for script in $(BENCH_SCRIPTS); do \
		echo "== $$script"; started=$$(date +%s); \
		$(1) $(PY) $$script || failed="$$failed $$script"; \
		echo "== $$script: $$(( $$(date +%s) - started )) s"; \
	done; \
	if [ -n "$$failed" ]; then echo "make $@: failed:$$failed"; exit 1; fi; echo "make $@: every script passed"
endef

bench: $(VENV)/.installed
	$(call run_benchmarks,)

bench-smoke: $(VENV)/.installed
	$(call run_benchmarks,BENCH_SMOKE=1)
