# Two commands do all setup on a fresh machine:
#   make demo   - set up, then a short demo of check + run
#   make test   - set up, then the whole test suite (as root, then unprivileged)
VENV ?= .venv
PY   := $(VENV)/bin/python

.PHONY: setup demo test differential fuzz bench clean

setup:
	@scripts/setup.sh

demo: setup
	@scripts/demo.sh

test: setup
	scripts/test-user.sh
	$(PY) -m pytest
	scripts/test-unprivileged.sh

# The full comparison against bash. The oracle runs inside ringfence's own Strict
# sandbox as an unprivileged user: as root, the run is handed to that user.
differential: setup
	@scripts/test-user.sh
	@if [ "$$(id -u)" = 0 ]; then \
	  RINGFENCE_DIFFERENTIAL=full scripts/test-unprivileged.sh -s tests/differential; \
	else \
	  RINGFENCE_DIFFERENTIAL=full $(PY) -m pytest -s tests/differential; \
	fi

fuzz: setup
	RINGFENCE_FUZZ=long $(PY) -m pytest tests/fuzz

bench: setup
	$(PY) bench/report.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
