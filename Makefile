# The two commands of the README: `make demo` (everything, end to end, offline) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cksum < pyproject.toml | cut -d' ' -f1)
# the demo needs only the pipeline's extras: no Chromium, Ray or PostgreSQL (those are the tests' set-up)
DEMO_STAMP := $(VENV)/.installed-demo-$(shell cksum < pyproject.toml | cut -d' ' -f1)
DEMO_EXTRAS := dense,fast,nlp
PIP := $(PY) -m pip install --quiet --disable-pip-version-check --no-compile  # bytecode is compiled on first import, for what is used
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# axe-core from npm, for the accessibility tests in Chromium (tests/service/axe.py reads its axe.min.js)
AXE_VERSION := 4.14.1
AXE_STAMP := $(VENV)/axe/.installed-axe-core-$(AXE_VERSION)

.PHONY: demo test test-fast lint bench bench-headline setup clean

$(STAMP):
	test -x $(PY) || python3 -m venv $(VENV)
	# torch first, the CPU build; anything that needs torch would otherwise pull a multi-GB CUDA build
	$(PIP) torch==2.13.0
	$(PIP) -e '.[all,test]'
	bash scripts/install-wordnet.sh $(VENV)
	# the browser tests drive the system's Chromium (Debian's; Playwright cannot download its own offline)
	command -v chromium >/dev/null || ($(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium)
	rm -f $(VENV)/.installed-* && touch $(STAMP) $(DEMO_STAMP)

$(AXE_STAMP):
	command -v npm >/dev/null || ($(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq npm)
	npm install --prefix $(VENV)/axe --no-audit --no-fund --loglevel=error axe-core@$(AXE_VERSION)
	rm -f $(VENV)/axe/.installed-* && touch $(AXE_STAMP)

$(DEMO_STAMP):
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) torch==2.13.0
	$(PIP) -e '.[$(DEMO_EXTRAS)]'
	rm -f $(VENV)/.installed-demo-* && touch $(DEMO_STAMP)

setup: $(STAMP) $(AXE_STAMP)

demo: $(DEMO_STAMP)
	$(VENV)/bin/factscout demo $(DEMO_ARGS)  # e.g. DEMO_ARGS='--timings t.json'

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks tools
	$(VENV)/bin/ruff format --check src tests benchmarks tools
	$(VENV)/bin/mypy src/factscout

test: lint $(AXE_STAMP)
	# two workers (pytest-xdist): 537 s against about 620 s in one process on 2 cores; the slowest tests named in every CI log
	$(VENV)/bin/pytest -q -n 2 --durations=15  # docs/testing.md: make test from a fresh clone within 12 minutes

# the inner loop: unit tests only, no Ray cluster, Chromium, PostgreSQL server, full dataset or sentence encoder (docs/testing.md)
test-fast: $(STAMP)
	$(VENV)/bin/pytest -q -m 'not slow and not ray and not browser and not postgres and not dataset and not encoder'

# every README and docs figure has a reproduction spec (benchmarks/specs.toml); `bench` runs the specs estimated at
# most an hour each, `bench-headline` the longer ones (hours on 2 cores); then the README and docs are refilled
# from the regenerated tables. A figure outside its spec's tolerance fails the target after the refill.
bench: $(STAMP)
	$(PY) benchmarks/reproduce.py --max-minutes 60; status=$$?; $(PY) tools/update_readme.py && exit $$status

bench-headline: $(STAMP)
	$(PY) benchmarks/reproduce.py --longer-than 60; status=$$?; $(PY) tools/update_readme.py && exit $$status

clean:
	rm -rf $(VENV) .factscout .pytest_cache .ruff_cache
