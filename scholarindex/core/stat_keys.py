"""The crawl's stat keys, each declared once, by namespace.

Components write them into Scrapy's stats collector; the verdict, the run report
and the log summaries read them. The strings are an interface: the stats dump at
the end of a crawl, the run reports and the scripts that check them use these
names, so a key is never renamed. A ``..._BY_...`` key is a prefix: one stat per
reason, layout or code, named by appending it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from scholarindex.core.enrichment_status import DONE, NONE, PENDING

# --- profiles/: the profile spider --------------------------------------------------------
PROFILES_REQUESTED: Final = "profiles/requested"  # well-formed URLs the crawl was given
PROFILES_BAD_URL: Final = "profiles/bad_url"  # URLs skipped: not http, https or file
PROFILES_PARSED: Final = "profiles/parsed"  # pages read as a profile (one researcher each)
PROFILES_UNCHANGED: Final = "profiles/unchanged"  # pages skipped: unchanged since the last run
PROFILES_UNRECOGNIZED: Final = "profiles/unrecognized"  # pages in no known layout: no items
PROFILES_ENCODING_PROBLEM: Final = "profiles/encoding_problem"  # pages with a decoding problem
# Parsed pages with fewer listings read than they announce ("N published items"): cut
# short (size, limits), or listings the parser could not read.
PROFILES_TRUNCATED: Final = "profiles/truncated"
# Listings those pages announce and the parser did not read: the shortfalls, summed.
PROFILES_LISTINGS_UNREAD: Final = "profiles/listings_unread"
# Parsed pages with a listing left out for want of a title of its own (its title slot
# empty or holding an abstract or a meta line).
PROFILES_UNTITLED: Final = "profiles/untitled"
# Parsed pages whose listings could be read more than one way (a guessed card split).
PROFILES_AMBIGUOUS: Final = "profiles/ambiguous"
PROFILES_LISTINGS: Final = "profiles/listings"  # work listings on the parsed pages
PROFILES_FAILED: Final = "profiles/failed"  # pages whose download failed
PROFILES_FAILED_BY_REASON: Final = "profiles/failed/"  # + exception name or http_<status>
PROFILES_BY_LAYOUT: Final = "profiles/layout/"  # + layout: parsed pages per layout

# --- incremental/: conditional requests and page hashes (crawler.middlewares.incremental) --
INCREMENTAL_CONDITIONAL: Final = "incremental/conditional_requests"  # sent with ETag/date
INCREMENTAL_NOT_MODIFIED: Final = "incremental/not_modified"  # answered 304
INCREMENTAL_SAME_HASH: Final = "incremental/same_hash"  # same content as last time: skipped
INCREMENTAL_RECORDED: Final = "incremental/recorded"  # page states noted for the commit
INCREMENTAL_COMMITTED: Final = "incremental/committed"  # page states kept: the run ended well

# --- arxiv/: the arXiv enrichment (pipelines.enrich, enrichment) ---------------------------
ARXIV_REQUESTS: Final = "arxiv/requests"  # HTTP requests sent to arXiv
ARXIV_RETRIES: Final = "arxiv/retries"  # requests retried after a transient failure
ARXIV_BAD_QUERIES: Final = "arxiv/bad_queries"  # queries arXiv refused as malformed (400)
ARXIV_CACHE_HITS: Final = "arxiv/cache_hits"  # work items answered from the cache at once
ARXIV_CACHE_MISSES: Final = "arxiv/cache_misses"  # work items queued for a lookup
ARXIV_MIRROR_ANSWERS: Final = "arxiv/mirror_answers"  # titles the local mirror answered
# Titles another worker of the deployment was asking arXiv for: its answer was taken.
ARXIV_ASKED_BY_OTHER_WORKERS: Final = "arxiv/asked_by_other_workers"
ARXIV_MATCHED: Final = "arxiv/matched"  # distinct works whose latest answer is a match
ARXIV_UNMATCHED: Final = "arxiv/unmatched"  # ... is "no such entry on arXiv"
ARXIV_PENDING: Final = "arxiv/pending"  # ... is still "pending" (arXiv could not answer)
# Distinct works per enrichment status: the three stats above.
ARXIV_BY_STATUS: Final = {DONE: ARXIV_MATCHED, NONE: ARXIV_UNMATCHED, PENDING: ARXIV_PENDING}

# --- index/: the OpenSearch index pipeline and its writer (pipelines.index, indexing.bulk) --
INDEX_LISTINGS_RECEIVED: Final = "index/listings_received"  # work listings buffered
INDEX_RESEARCHERS_RECEIVED: Final = "index/researchers_received"  # profiles buffered
# arXiv answers buffered, alone or carried in their listing's change.
INDEX_ENRICHMENTS_RECEIVED: Final = "index/enrichments_received"
INDEX_INVALID_ITEMS: Final = "index/invalid_items"  # items or answers no document can take
INDEX_BACKPRESSURE_WAITS: Final = "index/backpressure_waits"  # times the crawl waited
INDEX_PAUSES: Final = "index/pauses"  # times the crawl paused: OpenSearch stayed unavailable
INDEX_PAUSED_SECONDS: Final = "index/paused_seconds"  # seconds the crawl spent paused
INDEX_OUTAGE_EXPIRED: Final = "index/outage_expired"  # 1: paused past OPENSEARCH_OUTAGE_WAIT
INDEX_ERROR: Final = "index/error"  # why OpenSearch refused the indexer (text)
# Distinct documents written (created or updated) this run: one written in two flushes
# counts once (exact up to 100,000, then an estimate: scholarindex.core.distinct).
INDEX_DOCS: Final = "index/docs"
INDEX_DOC_WRITES: Final = "index/doc_writes"  # document writes: each flush's count, summed
INDEX_DOCS_CREATED: Final = "index/docs_created"  # documents written for the first time
INDEX_DOCS_UNCHANGED: Final = "index/docs_unchanged"  # merges that changed nothing: no write
INDEX_LISTINGS_DELIVERED: Final = "index/listings_delivered"  # listings in the index
INDEX_RESEARCHERS_DELIVERED: Final = "index/researchers_delivered"  # profiles in the index
# arXiv answers in the index, alone or carried in their listing's change.
INDEX_ENRICHMENTS_DELIVERED: Final = "index/enrichments_delivered"
INDEX_UNLISTED: Final = "index/unlisted"  # listings taken out of works a profile dropped
INDEX_DOCS_DELETED: Final = "index/docs_deleted"  # works deleted with their last listing
INDEX_WORKS_JOINED: Final = "index/works_joined"  # works merged into another of one paper
# Listings older than their profile's unlist (a replay, a late write): left out, not errors.
INDEX_LISTINGS_IGNORED: Final = "index/listings_ignored"
INDEX_MERGED: Final = "index/merged"  # listings that joined a work already listed
INDEX_CONFLICTS: Final = "index/conflicts"  # writes another writer beat (re-read, re-merged)
INDEX_RETRIES: Final = "index/retries"  # documents re-sent after a transient failure
INDEX_BULK_REQUESTS: Final = "index/bulk_requests"  # bulk requests sent
INDEX_DEAD_LETTERED: Final = "index/dead_lettered"  # changes written to the dead-letter file
INDEX_DEAD_LETTERED_BY_CODE: Final = "index/dead_lettered/"  # + dead-letter code

# --- run/: the run's identity and verdict (crawler.extensions) ----------------------------
RUN_JOB: Final = "run/job"  # the job name (text)
RUN_ID: Final = "run/id"  # the run id, shared by the parts of a resumed run (text)
RUN_RESUMED: Final = "run/resumed"  # this part resumes a paused run (bool)
RUN_OK: Final = "run/ok"  # the verdict (bool)
RUN_EXIT_CODE: Final = "run/exit_code"  # the exit status the crawl command returns
RUN_REASON: Final = "run/reason"  # the verdict in one line (text)
RUN_REPORT_NOT_INDEXED: Final = "run/report_not_indexed"  # 1 if the report was not stored

# CPU seconds between spider open and close (crawler/extensions/cpu.py, crawler/cpu.py).
CPU_MAIN_THREAD_SECONDS: Final = "cpu/main_thread_seconds"  # the reactor thread
CPU_PROCESS_SECONDS: Final = "cpu/process_seconds"  # every thread of the crawl's process
CPU_STAGE_SECONDS: Final = "cpu/stage_seconds/"  # + parse, enrichment, handoff, index_writer
# Page parser processes the crawl ran (0: pages were parsed on the reactor thread).
PARSE_PROCESSES: Final = "cpu/parse_processes"
# Pages parsed in the crawl's own process: before a parser process started, or without one.
PARSED_IN_CRAWL_PROCESS: Final = "cpu/pages_parsed_in_crawl_process"

# --- Scrapy's own stats that the verdict and the run report read --------------------------
SCRAPY_FINISH_REASON: Final = "finish_reason"  # the spider's close reason (text)
SCRAPY_RESPONSES: Final = "response_received_count"  # responses, robots.txt included
SCRAPY_ROBOTSTXT_RESPONSES: Final = "robotstxt/response_count"  # robots.txt responses
SCRAPY_RESPONSE_BYTES: Final = "downloader/response_bytes"  # bytes downloaded
SCRAPY_ITEMS_SCRAPED: Final = "item_scraped_count"  # items through every pipeline
SCRAPY_ITEMS_DROPPED: Final = "item_dropped_count"  # items a pipeline dropped
SCRAPY_ITEMS_DROPPED_BY_REASON: Final = "item_dropped_reasons_count/"  # + exception name
SCRAPY_ERRORS_LOGGED: Final = "log_count/ERROR"  # ERROR log lines
SCRAPY_DUPLICATES_FILTERED: Final = "dupefilter/filtered"  # requests seen before: skipped
SCRAPY_SPIDER_EXCEPTIONS_BY_TYPE: Final = "spider_exceptions/"  # + exception name

# --- The distributed crawl (crawler/distributed/), per worker ---------------------------
RUN_WORKER: Final = "run/worker"  # this worker's id in the job (text)
FRONTIER_PUSHED: Final = "frontier/pushed"  # requests sent to the shared queue (seen or not)
FRONTIER_TAKEN: Final = "frontier/taken"  # requests leased from the shared queue
FRONTIER_RECLAIMED: Final = "frontier/reclaimed"  # expired leases this worker put back
FRONTIER_ACKED: Final = "frontier/acked"  # pages acknowledged (done, items delivered or handed off)
# Of those, pages acknowledged with their items kept in the outbox until delivered.
FRONTIER_HANDED_OFF: Final = "frontier/handed_off"
# Pages a dead worker had handed off, adopted and delivered here.
FRONTIER_ADOPTED: Final = "frontier/outbox_adopted"
FRONTIER_RELEASED: Final = "frontier/released"  # leases handed back unfinished at close
FRONTIER_ROUND_TRIPS: Final = "frontier/redis_round_trips"  # calls to Redis by the scheduler


def stat_count(stats: Mapping[str, Any], key: str) -> int:
    """A counting stat as a number: 0 when the crawl never wrote it."""
    return int(stats.get(key) or 0)
