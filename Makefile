# Two commands on a fresh machine with Python 3.11 and pip:
#   make run   — set up .venv and run the main job (every notebook, on the embedded simulator)
#   make test  — set up .venv and run lint, the test suite and nbval over the notebooks
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
JOBS   ?= 2
NOTEBOOKS := $(wildcard notebooks/[0-9][0-9]_*.ipynb)
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with data/nbval_sanitize.cfg --nbval-cell-timeout=120

.PHONY: install run walk regress test lint nbval lab serve stress bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: regress

regress: install
	$(PY) -m kit regress --jobs $(JOBS)

walk: install
	$(PY) -m kit walk

lint: install
	$(PY) -m ruff check kit tests benchmarks
	$(PY) -m mypy kit

test: install lint
	$(PY) -m pytest -q -n $(JOBS) --dist loadscope tests
	$(PY) -m pytest -q -n $(JOBS) --dist loadscope $(NBVAL) $(NOTEBOOKS)

nbval: install
	$(PY) -m pytest -q -n $(JOBS) --dist loadscope $(NBVAL) $(NOTEBOOKS)

lab: install
	$(PY) -m jupyter lab notebooks

serve: install
	$(PY) -m kit serve

stress: install
	$(PY) -m benchmarks.stress

bench: install
	$(PY) -m benchmarks.bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache out
