# Two commands do all the set-up:  `make lab`  and  `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.fampnb-installed
# the versions the suite was last green on (requirements/README.md: how to refresh them);
# `make test-latest` runs with LOCK= (none): the newest releases pyproject.toml allows
LOCK   ?= requirements/lock.txt
PIPC   := $(if $(LOCK),-c $(LOCK))
COLAB  := .venv-colab
TESTS  := --nbval-lax --nbval-current-env -p no:cacheprovider tests notebooks

.PHONY: lab test lint venv torch test-latest venv-colab test-colab lock bench bench-browser notebooks clean

# Create the virtual environment when it is missing, (re)install when pyproject.toml or the lock
# changed.
$(STAMP): pyproject.toml $(LOCK)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q $(PIPC) --upgrade pip
	$(PY) -m pip install -q $(PIPC) -e ".[lab,test]"
	touch $(STAMP)

venv: $(STAMP)

# torch for the torch tests: the pinned CPU wheel (an unpinned torch pulls a multi-GB CUDA build)
torch: $(STAMP)
	$(PY) -m pip install -q $(PIPC) -r requirements/torch.txt

# (--allow-root only when run as root, e.g. in a container)
lab: $(STAMP)
	$(PY) -m jupyterlab $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/

# The Chinese edition (notebooks/zh/, README.zh.md)
.PHONY: lab-zh
lab-zh: $(STAMP)
	$(PY) -m jupyterlab $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/zh/

# The whole suite: unit tests, notebooks under nbval, browser tests (skipped with a reason when
# Chromium or torch is missing).  pytest exits 5 when it collects nothing, so an empty run fails too.
test: lint
	$(PY) -m pytest $(TESTS)

# ruff (pyflakes, pycodestyle, import order, pyupgrade) over the tree; mypy over the model layer
# (both configured in pyproject.toml).
lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

# The same suite in a fresh .venv-latest with the newest releases (torch stays pinned): drift in a
# dependency shows up here first, as this one command's failure.
test-latest:
	rm -rf .venv-latest
	$(MAKE) torch test VENV=.venv-latest LOCK=

# Google Colab's versions (requirements/colab.in; no torch, no JupyterLab): fampnb goes in without
# its dependencies, so that the environment stays Colab's; tests/test_environments.py checks that
# pip would change nothing there.  The unit tests and every notebook but 08 run; torch, TensorBoard and
# browser tests are deselected (not skipped): the main environment runs them.
$(COLAB)/.fampnb-installed: pyproject.toml requirements/colab.txt
	test -x $(COLAB)/bin/python || $(PYTHON) -m venv $(COLAB)
	$(COLAB)/bin/python -m pip install -q -r requirements/colab.txt
	$(COLAB)/bin/python -m pip install -q --no-deps --no-build-isolation -e .
	touch $@

venv-colab: $(COLAB)/.fampnb-installed

# Notebook 08 runs real torch ops in every section, so it runs in the main environment only.
NEEDS_TORCH := notebooks/08-where-nan-starts.ipynb notebooks/zh/08-where-nan-starts.ipynb

test-colab: venv-colab
	$(COLAB)/bin/python -m pytest -m "not torch and not browser and not tensorboard" \
	    $(addprefix --ignore=,$(NEEDS_TORCH)) $(TESTS)

# Refresh the locks from pyproject.toml and requirements/*.in with pip-tools (requirements/README.md)
lock:
	test -x .venv-tools/bin/pip-compile || ($(PYTHON) -m venv .venv-tools && \
	    .venv-tools/bin/pip install -q pip-tools)
	.venv-tools/bin/pip-compile -q --strip-extras --allow-unsafe --no-header --extra lab \
	    --extra test -o requirements/lock.txt pyproject.toml requirements/torch.txt \
	    requirements/lab.in
	.venv-tools/bin/pip-compile -q --strip-extras --allow-unsafe --no-header \
	    -o requirements/colab.txt requirements/colab.in

# every benchmark but the browser one (20+ minutes in JupyterLab + Chromium: make bench-browser)
bench: $(STAMP)
	for f in benchmarks/bench_*.py; do [ $$f = benchmarks/bench_browser.py ] && continue; \
	    echo "== $$f"; $(PY) $$f || exit 1; done

bench-browser: $(STAMP)
	$(PY) benchmarks/bench_browser.py

# Regenerate the Colab badge + setup cell of every notebook from [project.urls] in pyproject.toml,
# then the Chinese edition's markdown and set-up cells (code cells are the English ones).
notebooks: $(STAMP)
	$(PY) tools/nbtool.py sync
	$(PY) tools/nbtool.py zh

clean:
	rm -rf $(VENV) $(COLAB) .venv-latest .venv-tools .pytest_cache .hypothesis *.egg-info
