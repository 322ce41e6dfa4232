# Scholar Index: `make demo` runs the pipeline end to end on local fixtures,
# `make test` runs the whole suite. Both create .venv on first use.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint opensearch engine-deps wheel-check soak-outage soak-properties bench bench-indexing bench-search bench-reindex bench-load bench-distributed chaos-distributed chaos-cluster soak-distributed bench-dedupe bench-noise bench-resolution bench-scale browser-deps redis-deps clean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "make: $(PYTHON) not found; set PYTHON=/path/to/python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV)

# Reinstall only when the project's metadata changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# Debian's Chromium for the browser tests; never a downloaded browser.
# Installed only where we are root (CI, fresh machines); elsewhere the tests skip.
browser-deps:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null; then \
		echo "installing Debian chromium for the browser tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
			|| echo "chromium could not be installed; browser tests will skip"; \
	fi

# Debian's redis-server for the distributed crawl's tests (each starts its own on a free
# port). Installed only where we are root; elsewhere those tests skip, saying so.
redis-deps:
	@if command -v redis-server >/dev/null; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null; then \
		echo "installing Debian redis-server for the distributed crawl's tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null) \
			|| echo "redis-server could not be installed; the distributed crawl's tests will skip"; \
	fi

# A JDK and Maven for the real OpenSearch node (engine/): Debian's, installed only where
# they are missing and we are root (CI, fresh machines).
engine-deps:
	@if command -v java >/dev/null && command -v mvn >/dev/null; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's OpenJDK 17 and Maven for the OpenSearch node"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			openjdk-17-jdk-headless maven >/dev/null; \
	else echo "make: java and mvn are needed for the OpenSearch node (or set OPENSEARCH_TEST_URL)"; exit 1; fi

# Real OpenSearch nodes in the foreground, each in its own JVM, until Ctrl+C or SIGTERM:
# NODES (1), OPENSEARCH_PORT (9200; node i on PORT+i), OPENSEARCH_DATA (.opensearch/),
# OPENSEARCH_HEAP (1g a node), OPENSEARCH_VERSION. Prints `ready: URL[,URL...]` when green.
opensearch: $(STAMP) engine-deps
	$(BIN)/python -m engine

# ruff, the layer contracts in pyproject.toml ([tool.importlinter]) and the types (mypy).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

# Six test workers (pytest-xdist), more than a small machine's cores: most tests wait on
# servers and processes, so the waits overlap; work stealing keeps the long tests from
# ending up queued behind one another at the end.
# Bytecode is cached even where PYTHONDONTWRITEBYTECODE is set: every xdist worker and
# every crawl a test starts is a fresh interpreter, and each would otherwise compile the
# sources (and pytest rewrite the test modules) again. One collection warms the cache.
test: lint browser-deps redis-deps engine-deps
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest --collect-only -q >/dev/null
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n 6 --dist worksteal

# The crawl through a 60 s OpenSearch outage (the suite runs the same test with 3 s).
soak-outage: $(STAMP)
	OUTAGE_TEST_SECONDS=60 $(BIN)/python -m pytest -s tests/test_indexing_outage.py -k short_outage

# The property tests over a real node with ten times the suite's examples (a rare
# interleaving of crawls and passes shows only over many); FACTOR=N for another multiple.
soak-properties: $(STAMP)
	PROPERTY_EXAMPLES_FACTOR=$${FACTOR:-10} $(BIN)/python -m pytest tests/test_works_incremental.py -k random_crawls

demo: $(STAMP) engine-deps
	$(BIN)/python -m demo

# The benchmarks (bench/; none runs in `make test`, each has a small test there).
# The whole crawl pipeline on a 10,000-profile synthetic site (about 10 minutes).
bench: $(STAMP)
	$(BIN)/python -m bench.run

# Bulk writer throughput: 20,000 synthetic listings written twice (first crawl, re-crawl).
bench-indexing: $(STAMP)
	$(BIN)/python -m bench.indexing

# Search quality on real noisy queries (DBLP crawled, ACM titles asked: MRR@10, recall@1;
# ER_DATA_DIR, skipped without) and latency at 10,000 works: title queries, browsing.
# ARGS="--works 100000" adds the mixed-query latency at 100k synthetic works.
bench-search: $(STAMP)
	$(BIN)/python -m bench.search $(ARGS)

# Time a zero-downtime reindex of 100k synthetic works under a search loop.
bench-reindex: $(STAMP)
	$(BIN)/python -m bench.reindex

# 50 concurrent clients for 60 s on the demo index (loopback): p50/p95/p99, errors, req/s.
bench-load: $(STAMP)
	$(BIN)/python -m bench.load --out bench-load.json $(ARGS)

# The distributed crawl: the bench site crawled by 1, 2 and 4 workers on one Redis
# (pages/s, CPU per page, Redis commands per page); writes bench-distributed.json.
bench-distributed: $(STAMP) redis-deps
	$(BIN)/python -m bench.distributed --out bench-distributed.json $(ARGS)

# Three workers over 240 profiles, one SIGKILLed 2 to 10 s into the crawl, 20 times:
# every run must end within 2 minutes, exit 0, index what a single process indexes,
# and fetch at most 1.25 x the pages. Writes chaos-kill-loop.json (about 20 minutes).
chaos-distributed: $(STAMP) redis-deps
	$(BIN)/python -m bench.chaos kill-loop --out chaos-kill-loop.json $(ARGS)

# A real three-node OpenSearch cluster (one replica) under faults, each at moments drawn
# across the crawl: a data node and the elected cluster manager SIGKILLed mid-crawl (one
# process, and three workers on Redis) and restarted, the manager SIGKILLed mid-reindex
# under a search loop, write rejections, a disk past its flood-stage watermark, one node
# unreachable. 10 runs of each node fault; one table; writes chaos-cluster.json (about
# 45 minutes). ARGS="--runs 3 --faults manager" for less.
chaos-cluster: $(STAMP) redis-deps engine-deps
	$(BIN)/python -m bench.chaos_cluster --out chaos-cluster.json $(ARGS)

# Four workers over 2,000 profiles with arXiv (stand-in) and indexing on, under every
# fault at once: a worker SIGKILLed and restarted every 20 s, Redis stopped and started
# once, OpenSearch unreachable for 30 s (a fault proxy). Index compared with a single
# process's; writes chaos-soak.json. ARGS="--workers 2 --profiles 500" for less;
# ARGS=--use-env against the cluster OPENSEARCH_URL names (http://; also for chaos-distributed).
soak-distributed: $(STAMP) redis-deps
	$(BIN)/python -m bench.chaos soak --out chaos-soak.json $(ARGS)

# Work resolution on every development set (DBLP-ACM, DBLP-Scholar, Cora, bib-dedupe's
# respiratory and cytology sets; ER_DATA_DIR, default ../shared/data/er): the profile sites
# crawled end to end into bench.cluster's OpenSearch (ARGS=--use-env: OPENSEARCH_URL's), one
# INDEX_PREFIX a set; one table: pairwise P/R/F1, exact-title F1, records placed and read
# back; writes bench-dedupe.json. ARGS="--limit 300" or "--data cora" for a smaller run. The
# same table offline, in about a minute: python -m bench.er.scoreboard.
bench-dedupe: $(STAMP)
	$(BIN)/python -m bench.dedupe --out bench-dedupe.json $(ARGS)

# DBLP-ACM printed as other sites print it, a row per kind of damage (and pairs of kinds):
# the noise table of docs/resolution.md, offline (a few minutes). ARGS="--row typos" for one row.
bench-noise: $(STAMP)
	$(BIN)/python -m bench.er.noise_table $(ARGS)

# The resolution pass alone (scholarindex.core.resolution.resolve) on 70,000 synthetic atoms:
# CPU seconds per phase (features, blocking, decisions) and for the whole resolve.
bench-resolution: $(STAMP)
	$(BIN)/python -m bench.resolution_speed $(ARGS)

# Scale on the real engine: 1,000,000 synthetic works built through the bulk path, 1% of
# the profiles re-crawled from 127.0.0.1, the resolution pass (incremental, then full):
# its time and peak memory, search p50/p95 and papers shown twice during the re-crawl,
# index size per work; writes bench-scale.json. ARGS="--works 100000" for less;
# ARGS=--use-env for the cluster OPENSEARCH_URL names (INDEX_SHARDS, INDEX_REPLICAS).
bench-scale: $(STAMP) engine-deps
	$(BIN)/python -m bench.scale --out bench-scale.json $(ARGS)

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .ruff_cache demo-output test-artifacts

# What ships, outside the checkout: the wheel in a fresh venv (no extras), its commands,
# and a parse-only crawl of a fixture page. Prints the wheel's top-level import names.
wheel-check: $(STAMP)
	rm -rf build/wheel-check && mkdir -p build/wheel-check
	$(BIN)/pip wheel --quiet --no-deps . -w build/wheel-check/dist
	$(BIN)/python -c "import glob, zipfile; names = zipfile.ZipFile(glob.glob('build/wheel-check/dist/*.whl')[0]).namelist(); print('top-level:', sorted({n.split('/')[0] for n in names if '.dist-info' not in n}))"
	$(PYTHON) -m venv build/wheel-check/venv
	build/wheel-check/venv/bin/pip install --quiet build/wheel-check/dist/*.whl
	cp fixtures/site/bzpeer/researchers/jose-luis-penalver/index.html build/wheel-check/page.html
	cd /tmp && $(CURDIR)/build/wheel-check/venv/bin/scholarindex --help >/dev/null
	cd /tmp && $(CURDIR)/build/wheel-check/venv/bin/scholarindex serve --help >/dev/null
	cd build/wheel-check && SCRAPY_SETTINGS_MODULE=crawler.settings venv/bin/scrapy crawl profiles \
		-a urls=file://$(CURDIR)/build/wheel-check/page.html -s INDEX_ENABLED=false \
		-s ARXIV_ENABLED=false -s LOG_LEVEL=ERROR -O items.jsonl
	@echo "wheel ok: $$(wc -l < build/wheel-check/items.jsonl) records from a fixture page"
