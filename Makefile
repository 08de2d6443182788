# Quick start: `make demo` (set up, then train an LSTM on T-L, AMRL-Max and an LSTM on T-LN) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test setup bench

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[test]"
	touch $@

demo: setup
	$(BIN)/memrl reproduce tln-demo

test: setup
	$(BIN)/python -m pytest -q

bench: setup
	$(BIN)/memrl bench
