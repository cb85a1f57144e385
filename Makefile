# Two commands on a fresh machine with Python 3.11 and pip:
#   make run   — set up .venv and run the main job on the embedded simulator
#   make test  — set up .venv and run the whole test suite
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
JOBS   ?= 2

.PHONY: install run test lint serve clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(PY) -m kit walk

lint: install
	$(PY) -m ruff check kit tests

test: install lint
	$(PY) -m pytest -q -n $(JOBS) --dist loadscope

serve: install
	$(PY) -m kit serve

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache out
