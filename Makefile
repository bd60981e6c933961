# The two commands of the README: `make run` (backend + demo world, embedded) and `make test`.
# Each creates .venv and installs the project on first use; re-running is safe and quick.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml sdk/python/pyproject.toml | sha1sum | cut -c1-12)

.PHONY: run test lint typecheck contracts

# The gateway's port: `make run PORT=8080`.
PORT ?= 8000
# Test processes: three pytest-xdist workers (on two cores: 9-18 minutes instead of about 28 in one; modules
# that start a whole stack keep to two of them, tests/conftest.py). `make test TEST_WORKERS=1`: one pytest.
TEST_WORKERS ?= 3

run: $(STAMP)
	$(VENV)/bin/npcworld run --port $(PORT)

test: $(STAMP)
	@# The console's browser tests drive Debian's chromium; the monitoring checks run promtool (Debian's
	@# prometheus). Both are installed here when missing and we are root.
	@test -x /usr/bin/chromium -a -x /usr/bin/promtool || { test "$$(id -u)" = 0 && apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium prometheus >/dev/null; } || \
	  { echo "the tests need /usr/bin/chromium and /usr/bin/promtool: sudo apt-get install chromium prometheus"; exit 1; }
	$(VENV)/bin/python -m pytest $(if $(filter-out 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadgroup)

lint: $(STAMP)
	$(VENV)/bin/ruff check libs services launcher tests bench sdk/python

typecheck: $(STAMP)
	$(VENV)/bin/mypy libs services launcher bench

contracts: $(STAMP)
	$(VENV)/bin/npcworld contracts

$(STAMP): pyproject.toml sdk/python/pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] < (3, 13) else 1)' || \
	  { echo "npcworld needs Python 3.11 or 3.12 as '$(PYTHON)' (set PYTHON=/path/to/python3.11)"; exit 1; }
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV) || \
	  { echo "could not create $(VENV): install the venv module (apt-get install python3-venv)"; exit 1; }
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[dev]' -e sdk/python || \
	  { echo "pip install failed: check access to the package index (pip config list)"; exit 1; }
	@rm -f $(VENV)/.installed-*
	@touch $@
