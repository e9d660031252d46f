# Two commands do all the set-up:  `make lab`  and  `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.fampnb-installed

.PHONY: lab test venv bench notebooks clean

# Create the virtual environment when it is missing, (re)install when pyproject.toml changed.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[lab,test]"
	touch $(STAMP)

venv: $(STAMP)

# (--allow-root only when run as root, e.g. in a container)
lab: $(STAMP)
	$(PY) -m jupyterlab $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/

# The Chinese edition (notebooks/zh/, README.zh.md)
.PHONY: lab-zh
lab-zh: $(STAMP)
	$(PY) -m jupyterlab $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/zh/

# The whole suite: unit tests, notebooks under nbval, browser tests (skipped with a reason when
# Chromium is missing).  pytest exits 5 when it collects nothing, so an empty run fails too.
test: $(STAMP)
	$(PY) -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider tests notebooks

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

# Regenerate the Colab badge + setup cell of every notebook from [project.urls] in pyproject.toml,
# then the Chinese edition's markdown and set-up cells (code cells are the English ones).
notebooks: $(STAMP)
	$(PY) tools/nbtool.py sync
	$(PY) tools/nbtool.py zh

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis *.egg-info
