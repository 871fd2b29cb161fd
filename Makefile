# dpteach: `make lab` opens the course, `make test` runs every test layer.
# Both create .venv on first use; nothing else needs installing beforehand.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 8888
NB     ?= 06
STAMP  := $(VENV)/.installed
NBG_VENV  := .venv-nbgrader
NBG_STAMP := $(NBG_VENV)/.installed

.PHONY: lab test setup test-unit test-panels test-notebooks test-browser exercises demo \
        grade nbgrader nbgrader-setup test-nbgrader bench chromium bubblewrap clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	@# pycanon (a peer anonymity library, used only by tests) pins old numpy/pandas/scipy;
	@# installed without its dependencies so the kit keeps current versions.
	$(PY) -m pip install --quiet --no-deps "pycanon>=1.0" && $(PY) -m pip install --quiet "beartype>=0.16"
	@touch $(STAMP)

setup: $(STAMP)

# JupyterLab refuses to run as root unless told; only then is --allow-root passed.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) \
		--ServerApp.root_dir=notebooks $(ALLOW_ROOT)

# With CI=true the browser test must run, so Debian's Chromium is installed first.
chromium:
	@if [ "$${CI:-}" = "true" ] && ! command -v chromium >/dev/null 2>&1; then \
		echo "CI: installing Debian's chromium for the browser test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

# Grading runs each submission in a bubblewrap sandbox; with CI=true Debian's bubblewrap
# is installed first, like Chromium (elsewhere `make grade` says how to get it).
bubblewrap:
	@if [ "$${CI:-}" = "true" ] && ! command -v bwrap >/dev/null 2>&1; then \
		echo "CI: installing Debian's bubblewrap for the grading sandbox"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; \
	fi

test: $(STAMP) $(NBG_STAMP) chromium bubblewrap
	$(PY) -m pytest tests -q -ra
	$(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
		-q -p no:cacheprovider notebooks/*.ipynb

test-unit: $(STAMP)
	$(PY) -m pytest tests -q -m "not browser" --ignore=tests/test_panels.py

test-panels: $(STAMP)
	$(PY) -m pytest tests/test_panels.py -q

test-notebooks: $(STAMP)
	$(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
		-q notebooks/*.ipynb

test-browser: $(STAMP) chromium
	$(PY) -m pytest tests -q -m browser

# Voilà dashboard of one notebook (code hidden): make demo NB=06 [DEMO_PORT=8866]
DEMO_PORT ?= 8866
demo: $(STAMP)
	$(VENV)/bin/voila $(firstword $(wildcard notebooks/$(NB)_*.ipynb) notebooks/$(NB)) \
		--Voila.ip=127.0.0.1 --port=$(DEMO_PORT)

# Student copies of the coursework: blank the cells tagged "solution", clear outputs.
exercises: $(STAMP)
	$(PY) -m dpteach.coursework

# Grade handed-in notebooks, each in its own bubblewrap sandbox (read-only kit, no network,
# nothing outlives it); one CSV row per notebook and task, and per-notebook totals in
# REPORT's name + _totals: make grade FILES="a.ipynb b.ipynb" REPORT=grades.csv
# [TIMEOUT=120] [ASSIGNMENT=A3] [JOBS=2] [SANDBOX=0 grades without the sandbox: unsafe].
REPORT  ?= grades.csv
TIMEOUT ?= 120
JOBS    ?= 1
SANDBOX ?= 1
grade: $(STAMP) bubblewrap
	@test -n "$(FILES)" || { echo 'usage: make grade FILES="a.ipynb b.ipynb" REPORT=grades.csv [JOBS=2]'; exit 2; }
	$(PY) -m dpteach.grading $(FILES) --report $(REPORT) --timeout $(TIMEOUT) --jobs $(JOBS) $(if $(ASSIGNMENT),--assignment $(ASSIGNMENT)) $(if $(filter 0,$(SANDBOX)),--no-sandbox)

# The coursework as an nbgrader course (source/A1 ... A9 and nbgrader_config.py), written
# from notebooks/solutions like `make exercises`: make nbgrader NBGRADER_DIR=course
NBGRADER_DIR ?= nbgrader-course
nbgrader: $(STAMP)
	$(PY) -m dpteach._nbgrader $(NBGRADER_DIR)

# nbgrader itself (for tests/test_nbgrader.py) lives in its own venv: it pins its own
# Jupyter stack, which must not move the kit's JupyterLab and Voila.
$(NBG_STAMP): pyproject.toml
	@test -x $(NBG_VENV)/bin/python || $(PYTHON) -m venv $(NBG_VENV)
	$(NBG_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(NBG_VENV)/bin/python -m pip install --quiet "nbgrader>=0.9" -e .
	@touch $(NBG_STAMP)

nbgrader-setup: $(NBG_STAMP)

test-nbgrader: $(STAMP) $(NBG_STAMP)
	$(PY) -m pytest tests/test_nbgrader.py -q

bench: $(STAMP)
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) $(NBG_VENV) test-artifacts .pytest_cache
