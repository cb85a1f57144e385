# Two commands on a fresh machine with Python 3.11 and pip:
#   make run   — set up .venv and run the main job (every notebook, on the embedded simulator)
#   make test  — set up .venv and run lint, the test suite and nbval over the notebooks
# and, before a merge or nightly, make slow (the slow suites: a fresh light install, whole kit
# regress runs, populations on a Dask cluster, mypy over planted mistakes, the short soak…) and
# make e2e (the browser suite). .venv gets every extra: partner-api-kit[all,test], at the versions
# CI tested (constraints.txt; `make constraints` writes it again from .venv after a change).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
JOBS   ?= 2
NOTEBOOKS := $(wildcard notebooks/[0-9][0-9]_*.ipynb)
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with data/nbval_sanitize.cfg --nbval-cell-timeout=120

.PHONY: install run walk regress test slow lint nbval lab serve stress bench bench-paired clean docs site

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[all,test]'
	$(PY) -m compileall -q kit  # the .pyc files a regular install has (none are written under PYTHONDONTWRITEBYTECODE)
	touch $(STAMP)

install: $(STAMP)

# constraints.txt from .venv: every distribution .[all,test] needs, at its installed version
.PHONY: constraints
constraints: install
	$(PY) -m tests.support.deps > constraints.txt.new && mv constraints.txt.new constraints.txt

run: regress

regress: install
	$(PY) -m kit regress --jobs $(JOBS)

walk: install
	$(PY) -m kit walk

lint: install
	$(PY) -m ruff check kit tests benchmarks notebooks
	$(PY) -m ruff format --check kit tests benchmarks
	$(PY) -m mypy kit

test: install lint site
	$(PY) -m pytest -q -n $(JOBS) --dist loadscope tests
	$(PY) -m pytest -q -n $(JOBS) --dist loadscope $(NBVAL) $(NOTEBOOKS)

# The documentation site (mkdocs.yml): `make docs` serves it on loopback, `make site` builds it
# into out/site, strictly (a broken link, a missing page or a docstring that does not resolve fails)
DOCS_ADDR ?= 127.0.0.1:8001
docs: install
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve --dev-addr $(DOCS_ADDR)

site: install
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet

# The slow suites (pytest marker `slow`, which pyproject's addopts leave out of every other run):
# a fresh virtual environment with the light install, whole kit regress runs, every notebook on a
# sandbox, populations on a Dask cluster, mypy over planted mistakes, the short soak: each test
# that takes about five seconds or more (three or four, for one that runs such a tool whole), so
# that make test stays under ten minutes on two cores.
# "No tests collected" (exit 5) is no failure.
slow: install
	$(PY) -m pytest -q -n $(JOBS) --dist loadscope -m slow tests; status=$$?; \
	if [ $$status -eq 5 ]; then echo "make slow: no slow tests collected"; exit 0; fi; exit $$status

nbval: install
	$(PY) -m pytest -q -n $(JOBS) --dist loadscope $(NBVAL) $(NOTEBOOKS)

# make lab LAB_ARGS="--port 8890 --no-browser"   (--allow-root is added when run as root; a token
# goes in the JUPYTER_TOKEN environment variable, never on the command line)
LAB_ARGS ?=
lab: install
	$(PY) -m jupyter lab notebooks $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# The browser suite: the notebooks in a real JupyterLab, in headless Chromium (Debian's package,
# installed when missing), plus every Mermaid diagram through the real parser. Screenshots: out/e2e
.PHONY: e2e
E2E_STAMP := $(VENV)/.e2e-stamp
$(E2E_STAMP): $(STAMP) pyproject.toml constraints.txt
	$(PY) -m pip install --quiet -c constraints.txt -e '.[e2e]'
	touch $(E2E_STAMP)

e2e: install $(E2E_STAMP)
	bash tests/e2e/setup.sh
	KIT_E2E=1 $(PY) -m pytest -q tests/notebooks/test_mermaid.py tests/e2e

# The screenshots a notebook shows (11_explorer's widget mid-journey and at its end), taken by the
# browser suite in JupyterLab and kept in notebooks/images/: run after the widget's look changes
SCREENSHOTS := 11_explorer-mid-journey.png 11_explorer-journey-end.png
.PHONY: screenshots
screenshots: install $(E2E_STAMP)
	bash tests/e2e/setup.sh
	KIT_E2E=1 $(PY) -m pytest -q tests/e2e/test_lab_notebooks.py -k explorer
	cp $(addprefix out/e2e/,$(SCREENSHOTS)) notebooks/images/

serve: install
	$(PY) -m kit serve

stress: install
	$(PY) -m benchmarks.stress

# kit serve under a week of team traffic (200,000 requests), its memory sampled: fails on a 5xx,
# a wrong answer or memory still growing after the warm-up; writes benchmarks/results/soak.json,
# then the same with kit serve --state (benchmarks/results/soak_state.json)
.PHONY: soak
soak: install
	$(PY) -m benchmarks.soak
	$(PY) -m benchmarks.soak --state

bench: install
	$(PY) -m benchmarks.bench

# The same bench against an earlier commit, rounds alternating, one interpreter for both sides:
# make bench-paired BASE=<revision> [ROUNDS=5]
ROUNDS ?= 5
bench-paired: install
	$(PY) -m benchmarks.paired $(BASE) --rounds $(ROUNDS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache out
