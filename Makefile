# Bare `make` lists the jobs.
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
# Test processes (pytest-xdist); 0 runs the tests in make's own pytest process. A test file stays in one process.
PYTEST_WORKERS ?= 2
# Where the site serves its client wheel from (the NVMEDB_CLIENT_WHEEL_DIR setting's default).
CLIENT_WHEEL_DIR ?= $(or $(NVMEDB_CLIENT_WHEEL_DIR),$(or $(NVMEDB_VAR_DIR),var)/client)
CLIENT_SOURCES := client/pyproject.toml client/README.md client/LICENSE $(shell find client/src -name '*.py' -o -name '*.json')

.PHONY: help run test lint format bench
help:
	@echo "make run    - set up, build the client wheel, migrate, start the site and a task worker on http://127.0.0.1:$(PORT)/"
	@echo "make test   - set up and run every test (services not running are skipped locally, never in CI)"
	@echo "make lint   - ruff check and format check"
	@echo "make format - ruff format and fix"
	@echo "make bench  - run the benchmark scripts in bench/"

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

format: $(VENV)/.installed
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: $(VENV)/.installed
	for script in bench/[!_]*.py; do $(PY) $$script || exit 1; done
