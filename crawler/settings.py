"""Scrapy settings for Scholar Index.

Every project setting is declared once, with its default and a line on what it does:
the Scrapy project's own here, the ones ``scholarindex`` shares with the crawl
(OpenSearch, arXiv, Redis, run reports, the contact URL) in ``scholarindex/settings.py``,
taken in whole below. Nothing else repeats a default. The names listed in
``ENVIRONMENT_SETTINGS`` (docs/interfaces.md) are also read from the environment, so a
cron line or systemd unit can configure a run without touching this file: the add-on
``crawler.environment.Environment`` applies them. Precedence: the defaults < the
environment < ``scrapy crawl profiles -s NAME=value``.
"""

from scholarindex.core import retry as _retry  # lower-case: not a setting
from scholarindex.settings import *  # noqa: F403 (every shared setting is a crawl setting)

BOT_NAME = "scholarindex"
SPIDER_MODULES = ["crawler.spiders"]
NEWSPIDER_MODULE = "crawler.spiders"

# --- Politeness: fit for crawling real sites -------------------------------------------
# Honour robots.txt on every site.
ROBOTSTXT_OBEY = True
# Adapt the request rate to each server's latency; never more than this per domain.
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 1.0
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 4
# Give up on a page after this many seconds.
DOWNLOAD_TIMEOUT = 30
# Retry transient failures (5xx, 429, timeouts, dropped connections) a few times:
# the statuses every dependency retries (scholarindex.core.retry), plus the CDN's "origin timed
# out" answers (522, 524) that crawled sites behind Cloudflare give.
RETRY_ENABLED = True
RETRY_TIMES = 3
RETRY_HTTP_CODES = sorted(_retry.RETRYABLE_STATUSES | {522, 524})
# A profile page is a few tens of KB; refuse anything past 8 MB and warn past 2 MB.
DOWNLOAD_MAXSIZE = 8 * 1024 * 1024
DOWNLOAD_WARNSIZE = 2 * 1024 * 1024
# Depth for `-a follow=true` (links from a profile to co-authors' profiles).
DEPTH_LIMIT = 2
# Scrapy's own defaults that we rely on, stated so nobody flips them by accident.
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"

# --- Parsing ----------------------------------------------------------------------------
# Worker processes that parse pages beside the reactor (crawler/parse_pool.py); 0 parses
# on the reactor thread. One keeps a 2-core machine's second core for the index writer.
PARSE_PROCESSES = 1
# ...started once the crawl has parsed this many pages itself: a worker is a fresh
# interpreter, which a crawl of a few pages never earns back.
PARSE_PROCESSES_AFTER = 20

# --- Items: one a page ------------------------------------------------------------------
# Items handled at once per response: a page yields one item (crawler/spiders/profiles.py),
# and Scrapy starts this many worker tasks for every response (its default, 100, cost
# more than the page's item itself).
CONCURRENT_ITEMS = 1
# Scrapy would read and parse the callback's source on every response to warn about a
# generator returning a value (its cache misses bound methods): a visible share of the
# crawl's CPU (docs/performance.md). Our callbacks return none (tests/test_spider.py checks).
WARN_ON_GENERATOR_RETURN_VALUE = False
# The spider yields one item a page; exports keep one record a line, researcher and listings
# (crawler/feeds.py), in every built-in format.
FEED_EXPORTERS = {
    "json": "crawler.feeds.JsonItemExporter",
    "jsonlines": "crawler.feeds.JsonLinesItemExporter",
    "jsonl": "crawler.feeds.JsonLinesItemExporter",
    "jl": "crawler.feeds.JsonLinesItemExporter",
    "csv": "crawler.feeds.CsvItemExporter",
    "xml": "crawler.feeds.XmlItemExporter",
    "marshal": "crawler.feeds.MarshalItemExporter",
    "pickle": "crawler.feeds.PickleItemExporter",
}

# --- Parsing ---------------------------------------------------------------------------
# The day the crawl treats as "today" (ISO date), for listings dated without a year.
# Empty means the real date; tests pin it to make results reproducible.
CRAWL_DATE = ""

# --- Stats ---------------------------------------------------------------------------
# Scrapy's in-memory stats without the wrapper that checks every read of them for a
# deprecated argument (crawler/stats.py): the crawl reads its stats dozens of times a page.
STATS_CLASS = "crawler.stats.CrawlStats"

# --- Pipelines -------------------------------------------------------------------------
# One item, one path: enrichment first, then the index.
ITEM_PIPELINES = {
    "pipelines.enrich.ArxivEnrichPipeline": 300,
    "pipelines.index.OpenSearchIndexPipeline": 800,
}

# --- Scheduled runs (docs/deploy/README.md) ----------------------------------------------
# Our `crawl` command replaces Scrapy's: it takes the job's lock and exits with the verdict.
COMMANDS_MODULE = "crawler.commands"
EXTENSIONS = {
    # Judge the run at its end (run/exit_code, run/reason); exit codes in docs/deploy/.
    "crawler.extensions.verdict.RunVerdict": 500,
    # Log the run's summary and write it as JSON to RUN_REPORT (asks RunVerdict for the
    # verdict and the resolution pass for its figures itself: no order among these three).
    "crawler.extensions.report.RunReport": 510,
    # With JOBDIR: resume after an interruption, start afresh after a crawl that ended.
    "crawler.extensions.jobdir.JobdirReset": 520,
    # Count a page item as its records (researcher and listings), as the feed has them.
    "crawler.extensions.records.RecordCounts": 505,
    # The one receiver of the item signals for the two above (a receiver costs per page).
    "crawler.extensions.itemsignals.ItemSignals": 506,
    # CPU time of the crawl's reactor thread and process, in the stats (cpu/...).
    "crawler.extensions.cpu.CpuAccounting": 540,
    # Collect garbage less often (GC_THRESHOLDS): the collector re-walks long-lived state.
    "crawler.extensions.gctuning.GcTuning": 530,
    # When a crawl finished: one work document per paper (WORKS_RESOLVE).
    "crawler.extensions.resolution.WorkResolution": 550,
    # Ctrl-C or SIGTERM while the spider closes: the close ends before the reactor stops.
    "crawler.extensions.closewait.CloseBeforeStop": 560,
}
# gc.set_threshold for the crawl (crawler/extensions/gctuning.py); empty: Python's defaults.
GC_THRESHOLDS = [50_000, 20, 10]
DOWNLOADER_MIDDLEWARES = {
    # Skip pages unchanged since the last good run (conditional requests, content hash).
    "crawler.middlewares.incremental.IncrementalMiddleware": 540,
}
# The job this run belongs to (lock, page state, report); empty: derived from the URL list.
RUN_JOB = ""
# Refuse to start while another run of the same job holds STATE_DIR/<job>.lock (exit 75).
RUN_LOCK = True
# The run fails when more than this share of its pages failed (download errors, bad URLs).
RUN_MAX_ERROR_RATE = 0.5
# After a crawl that got to its end, forget JOBDIR's seen requests: the next run starts afresh.
RUN_JOBDIR_RESET = True
# Page state (<job>.*.sqlite) and job locks (<job>.lock); must persist between runs.
STATE_DIR = ".scholarindex-state"
# Skip pages unchanged since the last good run: true, false, or auto (on when indexing).
# -a full=true processes every page once (and refreshes the state).
INCREMENTAL_ENABLED = "auto"
# Unattended runs need neither Scrapy's telnet console nor its local remote-control server.
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False

# --- Environment -------------------------------------------------------------------------
# Applies ENVIRONMENT_SETTINGS from the environment before the crawl starts.
# Then, with REDIS_URL set, the distributed crawl's scheduler and middlewares.
ADDONS = {"crawler.environment.Environment": 0,
          "crawler.distributed.addon.DistributedCrawl": 10}
