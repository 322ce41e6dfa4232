"""The settings the crawl and ``scholarindex`` share, each declared once with its default.

``crawler/settings.py`` adds the Scrapy project's own (politeness, components, the
scheduled runs) and takes every name here, so a crawl sees them all; ``scholarindex``
reads only these (``scholarindex.environment.product_settings``). The names listed in
``ENVIRONMENT_SETTINGS`` (docs/interfaces.md) are also read from the environment.
Precedence: these defaults < the environment < ``-s NAME=value`` on the command line.
"""

# --- Who is crawling ---------------------------------------------------------------------
# Where operators can reach whoever runs this crawler; sent in the User-Agent.
CONTACT_URL = "https://github.com/scholar-index/scholar-index"
# Rebuilt from CONTACT_URL when that is given (crawler/environment.py), unless set itself.
USER_AGENT = f"ScholarIndexBot/0.1 (+{CONTACT_URL})"

# --- OpenSearch --------------------------------------------------------------------------
# Switch indexing off for parse-only runs: -s INDEX_ENABLED=false.
INDEX_ENABLED = True
# After a crawl that finished, join the listings of one paper printed differently into one
# work document and split wrong joins (indexing/resolution.py; reads every work document).
WORKS_RESOLVE = True
# The cluster to write to, one node or several separated by commas (the client spreads
# requests over them and retries another when one fails); credentials are never logged.
OPENSEARCH_URL = "http://localhost:9200"
OPENSEARCH_USER = ""
OPENSEARCH_PASSWORD = ""
# TLS: verify the server's certificate, optionally against this CA bundle.
OPENSEARCH_VERIFY_CERTS = True
OPENSEARCH_CA_CERTS = ""
# Prefix for every alias and index name, to share a cluster between deployments.
INDEX_PREFIX = ""
# Primary shards of new works and researchers indices (bookkeeping indices keep one).
INDEX_SHARDS = 1
# Replicas of every new index: 0 on one node; 1 or more on a cluster, so a node can die.
INDEX_REPLICAS = 0
# Seconds before a request to OpenSearch is abandoned (then retried).
OPENSEARCH_TIMEOUT = 30.0
# Flush to OpenSearch every this many items (listings, profiles, enrichment results)...
INDEX_BATCH_SIZE = 500
# ...or when the buffered items reach this many bytes...
INDEX_BATCH_BYTES = 5 * 1024 * 1024
# ...or every this many seconds, so a slow crawl still indexes as it goes.
INDEX_FLUSH_INTERVAL = 2.0
# Items buffered while a flush is in flight (or held through an outage) before the crawl
# waits (backpressure).
INDEX_MAX_BUFFER = 2000
# Attempts per batch (the first included) before a document is dead-lettered.
INDEX_MAX_ATTEMPTS = 6
# Backoff with jitter between attempts: first wait and cap of one wait, in seconds.
INDEX_RETRY_INITIAL_WAIT = 0.5
INDEX_RETRY_MAX_WAIT = 10.0
# Up to this many seconds added at random to each wait, so writers do not retry in step.
INDEX_RETRY_JITTER = 0.5
# A 429/503 with Retry-After waits that long instead, up to this many seconds (0: ignore it).
INDEX_RETRY_AFTER_MAX = 60.0
# Seconds the crawl stays paused while OpenSearch is unavailable before the run ends (exit 3).
OPENSEARCH_OUTAGE_WAIT = 15 * 60.0
# Where items that could not be indexed go (JSONL), for `scholarindex replay`.
INDEX_DEADLETTER_PATH = "deadletter/index.jsonl"
# Days a tombstone record is kept after its unlist (`scholarindex tombstones prune`); replay
# sets aside dead-lettered listings seen longer ago than this, so a pruned one is never needed.
TOMBSTONE_RETENTION_DAYS = 365.0
# Before writing a new work, judge whether resolution would join it to an indexed work (or
# another new one) and write it hidden from searches until the pass (indexing/unresolved.py):
# a search never shows one paper twice mid-crawl. Off: no judgment (cheaper writes), and
# a paper printed two ways may show twice until the pass.
HIDE_UNRESOLVED_WORKS = True
# Merge and write in a child process (scholarindex/indexing/process.py), off the crawl's GIL.
INDEX_WRITER_PROCESS = True
# `scholarindex status|reindex`: folder of mapping files; empty: the package's index_mappings/.
INDEX_MAPPINGS_DIR = ""
# `scholarindex reindex|rollback` lock an alias (ops/lock.py); a holder silent this long is dead.
REINDEX_LOCK_STALE_SECONDS = 300.0

# --- arXiv enrichment --------------------------------------------------------------------
# Switch enrichment off: -s ARXIV_ENABLED=false.
ARXIV_ENABLED = True
# The arxiv package's query URL format; "{}" stands for the query string.
ARXIV_API_URL = "https://export.arxiv.org/api/query?{}"
# Seconds between two requests, shared by every process on this machine (min 3 for arXiv);
# with REDIS_URL, by every worker of the deployment.
ARXIV_DELAY_SECONDS = 3.0
# Where the lookup cache and the cross-process rate-limit lock live ("~" is expanded).
ARXIV_CACHE_DIR = "~/.cache/scholarindex/arxiv"
# Titles per arXiv query (one request per batch; 20 keeps a cold crawl near 1 request per 20 works).
ARXIV_BATCH_SIZE = 20
# Longest URL-encoded search_query per request; longer batches are cut.
ARXIV_MAX_QUERY_CHARS = 3000
# Entries per result page, and pages per query (a batch matching more is split in halves).
ARXIV_PAGE_SIZE = 200
ARXIV_MAX_PAGES = 3
# Read timeout of one arXiv request, seconds (connect timeout is min(10, this)).
ARXIV_TIMEOUT_SECONDS = 30
# Tries per page on 429/5xx/timeouts/empty pages; first pause, doubling, plus jitter, capped.
ARXIV_MAX_ATTEMPTS = 4
ARXIV_BACKOFF_SECONDS = 2
ARXIV_BACKOFF_MAX_SECONDS = 60
# A 429/503 with Retry-After waits that long instead, up to this many seconds (0: ignore it).
ARXIV_RETRY_AFTER_MAX = 300
# Times an empty first page is re-asked before it counts as "no match".
ARXIV_EMPTY_PAGE_CONFIRMATIONS = 2
# After an outage, batches go "pending" without asking for this long.
ARXIV_OUTAGE_COOLDOWN_SECONDS = 300
# Cache lifetime of a verified lookup and of a miss (or a title arXiv refused).
ARXIV_HIT_TTL_SECONDS = 7 * 86400
ARXIV_MISS_TTL_SECONDS = 86400
# Title similarity a candidate needs (see scholarindex/enrichment/matching.py); year tolerance.
ARXIV_TITLE_THRESHOLD = 0.90
ARXIV_YEAR_TOLERANCE = 1
# After each batch, one more request looking for the listings it left unmatched by a
# known author's surname and two title words (renamed papers); off: up to twice the requests.
ARXIV_FALLBACK_QUERIES = False
# Send a partial batch once its oldest title has waited this long.
ARXIV_BATCH_LINGER_SECONDS = 30
# Keep an idle crawl open for outstanding lookups until no answer came for this long.
ARXIV_IDLE_WAIT_SECONDS = 600
# The OAI-PMH endpoint `scholarindex arxiv harvest` mirrors arXiv from (into ARXIV_CACHE_DIR).
ARXIV_OAI_URL = "https://oaipmh.arxiv.org/oai"
# A mirror of all of arXiv harvested within this long says "not on arXiv" without asking the API.
ARXIV_MIRROR_MAX_AGE_SECONDS = 2 * 86400

# --- Run reports (docs/deploy/README.md) -------------------------------------------------
# Write the run report as JSON to this path (%(job)s, %(time)s filled in); empty: log only.
RUN_REPORT = ""

# --- Distributed crawl (docs/distributed.md) --------------------------------------------
# Redis for the distributed mode: every worker running the same
# `scrapy crawl profiles -a job=NAME -a url_file=F` shares one request queue, seen-set and
# leases there, and the arXiv request slot and answers too. Empty: one process, no Redis.
REDIS_URL = ""
# Before every Redis key, to share one Redis between deployments.
REDIS_KEY_PREFIX = "scholarindex:"
# A taken request goes back to the queue unless acknowledged or renewed within this many
# seconds (a dead worker's pages are redone after it); renewed every third of it.
REDIS_LEASE_SECONDS = 60.0
# While Redis is unreachable (restarting), calls are retried this long, then the run fails.
REDIS_RETRY_SECONDS = 300.0
# Requests taken from the shared queue in one round trip.
REDIS_TAKE_BATCH = 4
# At most this many pages leased by one worker and not yet acknowledged (taken, in the
# downloader, being parsed; a parsed page's items go to the worker's outbox in Redis as
# it is acknowledged): a worker killed at any moment leaves the fetched ones among them
# to be fetched again. Keep it above CONCURRENT_REQUESTS + REDIS_TAKE_BATCH, or the
# downloader runs below its concurrency; what is above that sum is what a kill costs
# when the index holds pages up in the pipelines (backpressure).
REDIS_MAX_UNACKED = 24
# A request taken this many times without an acknowledgement is set aside (job:NAME:dead).
REDIS_MAX_DELIVERIES = 5
# Set by the crawl command: the run of the job it joined, so a worker still starting up
# when that run finishes does not start the job again. Not for setting by hand.
REDIS_RUN_ID = ""

# --- Environment -------------------------------------------------------------------------
# The settings also read from the environment (docs/interfaces.md), by the crawler and by
# `scholarindex` alike. Values given there are text, as with -s.
ENVIRONMENT_SETTINGS = [
    "CONTACT_URL", "LOG_LEVEL", "CRAWL_DATE",
    "INDEX_ENABLED", "WORKS_RESOLVE", "HIDE_UNRESOLVED_WORKS", "OPENSEARCH_URL", "OPENSEARCH_USER",
    "OPENSEARCH_PASSWORD", "OPENSEARCH_VERIFY_CERTS", "OPENSEARCH_CA_CERTS", "INDEX_PREFIX",
    "INDEX_SHARDS", "INDEX_REPLICAS",
    "OPENSEARCH_TIMEOUT",
    "INDEX_DEADLETTER_PATH", "INDEX_MAPPINGS_DIR", "OPENSEARCH_OUTAGE_WAIT",
    "TOMBSTONE_RETENTION_DAYS",
    "ARXIV_ENABLED", "ARXIV_API_URL", "ARXIV_DELAY_SECONDS", "ARXIV_CACHE_DIR",
    "ARXIV_BATCH_SIZE", "ARXIV_MAX_QUERY_CHARS", "ARXIV_PAGE_SIZE", "ARXIV_MAX_PAGES",
    "ARXIV_TIMEOUT_SECONDS", "ARXIV_MAX_ATTEMPTS", "ARXIV_BACKOFF_SECONDS",
    "ARXIV_BACKOFF_MAX_SECONDS", "ARXIV_EMPTY_PAGE_CONFIRMATIONS",
    "ARXIV_OUTAGE_COOLDOWN_SECONDS", "ARXIV_HIT_TTL_SECONDS", "ARXIV_MISS_TTL_SECONDS",
    "ARXIV_TITLE_THRESHOLD", "ARXIV_YEAR_TOLERANCE", "ARXIV_BATCH_LINGER_SECONDS",
    "ARXIV_IDLE_WAIT_SECONDS", "ARXIV_OAI_URL", "ARXIV_MIRROR_MAX_AGE_SECONDS",
    "ARXIV_FALLBACK_QUERIES",
    "INDEX_RETRY_AFTER_MAX", "ARXIV_RETRY_AFTER_MAX", "REINDEX_LOCK_STALE_SECONDS",
    "RUN_JOB", "RUN_MAX_ERROR_RATE", "RUN_REPORT", "STATE_DIR", "INCREMENTAL_ENABLED",
    "REDIS_URL", "REDIS_KEY_PREFIX", "REDIS_LEASE_SECONDS", "REDIS_RETRY_SECONDS",
    "REDIS_MAX_UNACKED",
]
