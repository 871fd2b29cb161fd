# dpteach: `make lab` opens the course, `make test` runs every test layer.
# Both create .venv on first use; nothing else needs installing beforehand.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 8888
NB     ?= 06
LAB_STAMP  := $(VENV)/.installed-lab
TEST_STAMP := $(VENV)/.installed-test
STAMP      := $(TEST_STAMP)
NBG_VENV  := .venv-nbgrader
NBG_STAMP := $(NBG_VENV)/.installed
GRADE_VENV  := .venv-grade
GRADE_STAMP := $(GRADE_VENV)/.installed
# test files (and notebooks) run on two workers; a file stays on one worker, so its
# module-scoped fixtures (a graded batch, a JupyterLab server) are built once. The test
# files start in tests/conftest.py's order, heaviest first (--no-loadscope-reorder); the
# notebooks in xdist's, those with the most cells first
XDIST ?= -n 2 --dist loadfile --no-loadscope-reorder
XDIST_NB ?= -n 2 --dist loadfile
# setuptools warns on every editable build that the source folder shadows the package:
# true, intended, and not news to someone opening the course
PIP := PYTHONWARNINGS=ignore::UserWarning $(PY) -m pip install --quiet

.PHONY: help lint check lab test setup test-unit test-panels test-notebooks test-browser test-min exercises demo \
        grade nbgrader nbgrader-setup test-nbgrader bench chromium bubblewrap docs clean lite lite-site

$(PY):
	$(PYTHON) -m venv $(VENV)

# pip's own install of the kit (make lab, make docs) needs a recent pip: the one bundled
# with an early Python 3.10 cannot install a pyproject-only package in editable mode.
# make test installs with uv, for which the bundled pip is enough.
PIP_STAMP := $(VENV)/.pip-upgraded
$(PIP_STAMP): | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	@touch $@

# make lab: the kit with the lab extra (JupyterLab, Voila, a kernel) and nothing for tests;
# binder/overrides.json (no news pop-up, as on Binder) becomes this JupyterLab's default
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings
$(LAB_STAMP): pyproject.toml binder/overrides.json | $(PIP_STAMP)
	$(PIP) -e ".[lab]"
	@mkdir -p $(LAB_SETTINGS) && cp binder/overrides.json $(LAB_SETTINGS)/overrides.json
	@touch $@

# make test: every extra, the peer libraries included, installed by uv (the same versions
# pip resolves, in about 20 s instead of two minutes; compiled to bytecode at install, as
# pip does, so that no process compiles them again, e.g. where PYTHONDONTWRITEBYTECODE
# is set or site-packages is read-only, as in the grading sandbox); the kit's own sources
# (an editable install, which uv leaves alone) are compiled too. pycanon (a peer anonymity
# library, used only by tests) pins old numpy/pandas/scipy: it goes in last and without its
# dependencies (beartype, the one it needs, comes first), so the kit keeps current versions.
UV := $(VENV)/bin/uv
$(UV): | $(PY)
	$(PIP) "uv>=0.4"

$(TEST_STAMP): pyproject.toml binder/overrides.json | $(UV)
	$(UV) pip install --quiet --compile-bytecode --python $(PY) -e ".[test]" "beartype>=0.16"
	$(UV) pip install --quiet --compile-bytecode --python $(PY) --no-deps "pycanon>=1.0"
	$(PY) -m compileall -q dpteach
	@mkdir -p $(LAB_SETTINGS) && cp binder/overrides.json $(LAB_SETTINGS)/overrides.json
	@touch $@ $(LAB_STAMP)

setup: $(STAMP)

# JupyterLab refuses to run as root unless told; only then is --allow-root passed.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

# Quiet at start: no language-server scan (the course needs none; it prints a long list of
# servers it did not find), and no notebook_shim, the classic Notebook's compatibility layer
# JupyterLab 4 does not use, whose scan of every server setting reads the deprecated
# ServerApp.token and prints a DeprecationWarning.
lab: $(LAB_STAMP)
	$(VENV)/bin/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) \
		--ServerApp.root_dir=notebooks --LanguageServerManager.autodetect=False \
		--ServerApp.jpserver_extensions=notebook_shim=False $(ALLOW_ROOT)

# With CI=true the browser test must run, so Debian's Chromium is installed first.
chromium:
	@if [ "$${CI:-}" = "true" ] && ! command -v chromium >/dev/null 2>&1; then \
		echo "CI: installing Debian's chromium for the browser test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

# The notebooks' formulas are parsed by KaTeX (one of the two renderers JupyterLab offers)
# in tests/notebooks/test_notebook_text.py: KaTeX from the npm registry, into .node/ (Node.js runs it;
# with CI=true Debian's nodejs and npm are installed first where missing)
KATEX := .node/node_modules/katex/package.json
$(KATEX):
	@if [ "$${CI:-}" = "true" ] && ! command -v npm >/dev/null 2>&1; then \
		echo "CI: installing Debian's nodejs and npm for the formula check"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; \
	fi
	npm install --prefix .node --no-save --no-audit --no-fund --silent katex@0.16
	@test -f $@

# Grading runs each submission in a bubblewrap sandbox; with CI=true Debian's bubblewrap
# is installed first, like Chromium (elsewhere `make grade` says how to get it).
bubblewrap:
	@if [ "$${CI:-}" = "true" ] && ! command -v bwrap >/dev/null 2>&1; then \
		echo "CI: installing Debian's bubblewrap for the grading sandbox"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; \
	fi

test: $(STAMP) $(GRADE_STAMP) $(NBG_STAMP) $(KATEX) chromium bubblewrap lite-site
	$(PY) -m pytest tests -q -ra --durations=40 --junitxml=test-artifacts/tests.xml $(XDIST)
	$(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
		-q -p no:cacheprovider --durations=10 --junitxml=test-artifacts/notebooks.xml $(XDIST_NB) \
		notebooks/*.ipynb

# make check: the quick loop while writing a lesson (under a minute on two cores): lint,
# the layout rules and every file of tests/lessons but the slow ones. make test runs all
# of these again, and the rest. The rule for CHECK_SLOW: a lesson file whose tests take
# more than 5 CPU seconds in a make test run (test-artifacts/cpu-*.csv, written by
# tests/conftest.py) is left to make test. A new lesson file is in make check until it
# is that slow; then it goes in this list (and, if it takes half a minute or more, in
# HEAVY_FIRST too).
CHECK_SLOW := $(addprefix tests/lessons/test_,$(addsuffix .py, \
	accountants_upper_bound pld rdp sparse_vector beyond_global bad_input synthetic \
	epsilon_delta_lessons reliability reconstruction clipping pycanon_crosscheck invariants \
	anonymity audit sgd mechanisms curator))
CHECK_TESTS := tests/system/test_layout.py \
	$(filter-out $(CHECK_SLOW),$(sort $(wildcard tests/lessons/test_*.py)))

lint: $(STAMP)
	$(VENV)/bin/ruff check .

check: lint
	$(PY) -m pytest -q -p no:cacheprovider $(XDIST) $(CHECK_TESTS)

# make help: the targets a course team uses, one line each
help:
	@echo "make lab        JupyterLab on the course (http://127.0.0.1:$(PORT))"
	@echo "make demo NB=06 one notebook as a Voila dashboard, code hidden"
	@echo "make lite       the course as a static JupyterLite site (_build/lite), no install"
	@echo "make docs       the course website (docs/_build/html)"
	@echo "make exercises  the student copies of the assignments"
	@echo "make grade FILES=\"a.ipynb ...\" REPORT=grades.csv   grade hand-ins in the sandbox"
	@echo "make nbgrader   export the assignments for nbgrader"
	@echo "make lint       ruff, with the rules in pyproject.toml"
	@echo "make check      lint, layout and the quick lesson tests (under a minute)"
	@echo "make test       every test layer (about 15-20 minutes on 2 cores)"
	@echo "make bench      the speed figures of DESIGN.md (benchmarks/)"
	@echo "make clean      remove the environments and build output"

test-unit: $(STAMP)
	$(PY) -m pytest tests -q -m "not browser and not minversions" --ignore=tests/panels/test_panels.py

test-panels: $(STAMP)
	$(PY) -m pytest tests/panels/test_panels.py -q

test-notebooks: $(STAMP)
	$(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
		-q notebooks/*.ipynb

test-browser: $(STAMP) chromium
	$(PY) -m pytest tests -q -m browser

# the lowest declared versions on the lowest Python (cached in .venv-min/)
test-min: $(STAMP)
	$(PY) -m pytest tests/system/test_min_versions.py -q -ra

# Voilà dashboard of one notebook (code hidden): make demo NB=06 [DEMO_PORT=8866]
# A preheated kernel runs the notebook as the server starts, so a visitor who arrives once
# it is ready gets the page at once instead of waiting for every cell (notebooks/README.md).
# The dpteach template (share/jupyter/voila/templates/) asks no host but this one for anything.
DEMO_PORT ?= 8866
demo: $(LAB_STAMP)
	JUPYTER_PATH=$(CURDIR)/share/jupyter $(VENV)/bin/voila --template=dpteach \
		$(firstword $(wildcard notebooks/$(NB)_*.ipynb) notebooks/$(NB)) \
		--Voila.ip=127.0.0.1 --port=$(DEMO_PORT) --preheat_kernel=True --pool_size=1

# Student copies of the coursework: blank the cells tagged "solution", clear outputs.
exercises: $(STAMP)
	$(VENV)/bin/dpteach exercises

# Grade handed-in notebooks, each in its own bubblewrap sandbox (read-only kit, no network,
# nothing outlives it); one CSV row per notebook and task, and per-notebook totals in
# REPORT's name + _totals: make grade FILES="a.ipynb b.ipynb" REPORT=grades.csv
# [TIMEOUT=120 CPU seconds] [ASSIGNMENT=A3] [JOBS=2] [SHARD=K/N] [SANDBOX=0 grades without
# the sandbox: unsafe] [GRADE_FLAGS="--memory 4G --processes 256 --disk 512M --output 64M"].
REPORT  ?= grades.csv
TIMEOUT ?= 120
JOBS    ?= 1
SANDBOX ?= 1
grade: $(STAMP) $(GRADE_STAMP) bubblewrap
	@test -n "$(FILES)" || { echo 'usage: make grade FILES="a.ipynb b.ipynb" REPORT=grades.csv [JOBS=2]'; exit 2; }
	$(VENV)/bin/dpteach grade --report $(REPORT) --timeout $(TIMEOUT) --jobs $(JOBS) $(if $(ASSIGNMENT),--assignment $(ASSIGNMENT)) $(if $(SHARD),--shard $(SHARD)) $(if $(filter 0,$(SANDBOX)),--no-sandbox) $(GRADE_FLAGS) -- $(FILES)

# The coursework as an nbgrader course (source/A1 ... A10 and nbgrader_config.py), written
# from notebooks/solutions like `make exercises`: make nbgrader NBGRADER_DIR=course
NBGRADER_DIR ?= nbgrader-course
nbgrader: $(STAMP)
	$(VENV)/bin/dpteach nbgrader $(NBGRADER_DIR)

# The environment a graded notebook runs in, inside the sandbox: the kit's runtime and the
# grading extra only (no peer library, no test tool: a submission must not find in it what
# computes an answer, such as dp_accounting's RDP of the subsampled Gaussian). The kit is
# not installed in it: the sandbox mounts a copy of the kit without the answers.
$(GRADE_STAMP): pyproject.toml | $(UV)
	@test -x $(GRADE_VENV)/bin/python || $(UV) venv --quiet --python $(PYTHON) $(GRADE_VENV)
	$(UV) pip install --quiet --compile-bytecode --python $(GRADE_VENV)/bin/python -r pyproject.toml --extra grading
	@touch $(GRADE_STAMP)

# nbgrader itself (for tests/coursework/test_nbgrader.py) lives in its own venv: it pins its own
# Jupyter stack, which must not move the kit's JupyterLab and Voila. Compiled at install
# like the test venv: where PYTHONDONTWRITEBYTECODE is set, each of its processes would
# compile every module it imports again (measured: test_nbgrader 2.2 min -> 3.8 min).
$(NBG_STAMP): pyproject.toml | $(UV)
	@test -x $(NBG_VENV)/bin/python || $(UV) venv --quiet --python $(PYTHON) $(NBG_VENV)
	$(UV) pip install --quiet --compile-bytecode --python $(NBG_VENV)/bin/python "nbgrader>=0.9" -e .
	@touch $(NBG_STAMP)

nbgrader-setup: $(NBG_STAMP)

test-nbgrader: $(STAMP) $(NBG_STAMP)
	$(PY) -m pytest tests/coursework/test_nbgrader.py -q

# The course website: the committed notebooks as they are (never executed), the guide, the
# exercises and the API reference, built into docs/_build/html (open index.html there).
DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): pyproject.toml | $(UV)
	$(UV) pip install --quiet --python $(PY) -e ".[docs]"
	@touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(PY) -m sphinx -b html -q docs docs/_build/html
	@echo "The site is in docs/_build/html (start at index.html)."

bench: $(STAMP)
	$(PY) benchmarks/run.py

# The course in the browser: a JupyterLite site (Pyodide kernel, widgets, every notebook
# and the student exercises) in _build/lite/, built by lite/build.py with the pinned tools of
# lite/requirements-build.txt (in .venv-lite). LITE_PYODIDE=release (the default) takes
# Pyodide from its official release archive (network needed); LITE_PYODIDE=registries
# assembles it from the npm and PyPI registries alone, as make test does (tests/system/test_lite.py).
# The checked Pyodide is cached in ~/.cache/dpteach-lite. Serve it: python -m http.server -d _build/lite
LITE_VENV  := .venv-lite
LITE_STAMP := $(LITE_VENV)/.installed
LITE_PYODIDE ?= release
$(LITE_STAMP): lite/requirements-build.txt | $(UV)
	@test -x $(LITE_VENV)/bin/python || $(UV) venv --quiet --python $(PYTHON) $(LITE_VENV)
	$(UV) pip sync --quiet --python $(LITE_VENV)/bin/python --require-hashes lite/requirements-build.txt
	@touch $@

lite: $(LITE_STAMP)
	@if [ "$(LITE_PYODIDE)" = "registries" ] && [ "$${CI:-}" = "true" ] && ! command -v npm >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; fi
	$(LITE_VENV)/bin/python lite/build.py --pyodide $(LITE_PYODIDE)

lite-site:
	$(MAKE) --no-print-directory lite LITE_PYODIDE=registries

clean:
	rm -rf $(VENV) $(NBG_VENV) $(GRADE_VENV) $(LITE_VENV) _build .venv-min test-artifacts .pytest_cache docs/_build docs/reference docs/notebooks .node
