"""``OpenSearchIndexPipeline``: buffer items and merge them into OpenSearch in bulk.

Items are buffered and flushed by count, by size and every few seconds; a page
item (``scholarindex.core.items.PageItem``) is turned into its researcher's and listings' changes
at once, with one time stamp and one stats update; a listing's arXiv enrichment
travels in the listing's change (``scholarindex.indexing.changes``), an answer that comes later
(``work_enriched``) in a change of its own. A page's changes are packed
(``changes.pack_changes``) once, as they are buffered: the packed length is their
size, and a flush sends the packed messages to the writer's child as they are. A flush
runs ``BulkWriter.write`` in a thread, so the reactor never waits on OpenSearch,
and the write itself in a child process (``scholarindex.indexing.process``; switch off with
``INDEX_WRITER_PROCESS = false``), so merging does not slow parsing down;
one flush is in flight at a time, items keep buffering meanwhile, and when the
buffer grows past ``INDEX_MAX_BUFFER`` ``process_item`` waits for the flush
(backpressure on the crawl instead of unbounded memory).

A cluster that refuses our credentials at start, or stays unreachable through the
writer's retries (``INDEX_MAX_ATTEMPTS``: a node dying or a cluster-manager election
passes), stops the crawl before any page is fetched (close reason
``opensearch_unavailable``). Mid-crawl
failures are retried by the writer; when the cluster stays unavailable (connection
refused or cut, 429 or 5xx past ``INDEX_MAX_ATTEMPTS``) the writer hands the batch
back and the crawl pauses instead of piling up pages: the engine stops taking new
requests, the held changes stay in memory (counted in ``INDEX_MAX_BUFFER``), the
cluster is probed with the writer's backoff, and the crawl resumes by itself when it
answers (``index/paused_seconds``). An outage longer than ``OPENSEARCH_OUTAGE_WAIT``
ends the run: what the indexer holds is dead-lettered and the spider closes with
``opensearch_unavailable`` (exit 3). Changes the cluster refused for good are
dead-lettered; ``index/dead_lettered`` counts them so the run can end non-zero.

The pipeline is in one ``Phase`` at a time: starting (checking the cluster), running,
closing (the last flushes) and closed (an answer that comes now is dead-lettered as
late). Across them, the cluster is up, or paused in an outage (``pipelines.outage``),
or given up on: then every change buffered or still to come goes to the dead letters.
What waits for a flush is a ``pipelines.buffer.ChangeBuffer``.

A researcher item from a complete page also takes its profile out of the works
the page no longer lists (the writer's unlists: ``index/unlisted``, and
``index/docs_deleted`` for works no profile lists any more).
"""

from __future__ import annotations

import logging
from enum import Enum
from typing import Any, Self

from itemadapter import ItemAdapter, is_item
from scrapy.crawler import Crawler
from scrapy.exceptions import CloseSpider, DropItem, NotConfigured
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet.defer import Deferred
from twisted.internet.task import LoopingCall
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from crawler.close_reasons import INDEX_UNAVAILABLE
from crawler.cpu import CpuTally
from crawler.signals import (
    index_delivered,
    index_flush_soon,
    index_ticket,
    items_adopted,
    work_enriched,
)
from pipelines.buffer import ChangeBuffer
from pipelines.outage import OutageWatch, connect_patiently, log_failure
from scholarindex.core import stat_keys
from scholarindex.core.distinct import DistinctCounter
from scholarindex.core.items import PageItem, records
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.batching import Batching
from scholarindex.indexing.bulk import BulkWriter, WriteReport
from scholarindex.indexing.changes import Change, changes_from_records, enrichment_change
from scholarindex.indexing.client import build_client, quiet_transport_logs, translate_errors
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import (
    INTERNAL,
    LATE,
    UNAVAILABLE,
    DeadLetterFile,
    dead_letter,
)
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.indices import ensure_aliases
from scholarindex.indexing.process import ProcessWriter

logger = logging.getLogger(__name__)

_RECEIVED = {"work": stat_keys.INDEX_LISTINGS_RECEIVED,
             "researcher": stat_keys.INDEX_RESEARCHERS_RECEIVED,
             "enrichment": stat_keys.INDEX_ENRICHMENTS_RECEIVED}
# Shown as 0 in the stats dump of a run that indexed nothing.
_ZERO_AT_START = (stat_keys.INDEX_DOCS, stat_keys.INDEX_DOC_WRITES, stat_keys.INDEX_MERGED,
                  stat_keys.INDEX_CONFLICTS, stat_keys.INDEX_RETRIES, stat_keys.INDEX_DEAD_LETTERED,
                  stat_keys.INDEX_LISTINGS_DELIVERED, stat_keys.INDEX_BULK_REQUESTS,
                  stat_keys.INDEX_UNLISTED, stat_keys.INDEX_DOCS_DELETED)


class UnindexableItem(DropItem):
    """A researcher or work item without the id its document needs."""


class Phase(Enum):
    STARTING = "starting"  # open_spider checks the cluster and the aliases
    RUNNING = "running"  # buffering, flushing by count, size and time
    CLOSING = "closing"  # close_spider flushes what is left (through an outage, if one)
    CLOSED = "closed"  # all delivered or dead-lettered: a late answer is a dead letter


class OpenSearchIndexPipeline:
    """Merges researcher and work items (and enrichment results) into OpenSearch."""

    def __init__(self, crawler: Crawler, config: OpenSearchConfig,
                 writer: BulkWriter | ProcessWriter, batching: Batching,
                 policy: RetryPolicy, outage_wait: float):
        self.crawler = crawler
        self.stats = crawler.stats
        self.config = config
        self.writer = writer
        self.policy = policy  # the start's and the probes' backoff
        self.outage_wait = outage_wait  # OPENSEARCH_OUTAGE_WAIT
        self.flush_interval = batching.flush_interval
        self.phase = Phase.STARTING
        self.buffer = ChangeBuffer(batching)
        self.watch = OutageWatch(crawler, writer.client, config.prefix, config.safe_url,
                                 policy, outage_wait, on_back=self._back,
                                 on_give_up=self._give_up)
        self.given_up: str | None = None  # why, once the cluster was given up on
        self._refused = False  # the cluster refused the writer's credentials mid-crawl
        self._inflight: Deferred[Any] | None = None  # the one flush in flight
        self._flushes = 0  # flushes started, numbered for index_ticket/index_delivered
        self._flush_wanted = False  # flush_soon() asked for a flush before the timer's
        self._waiters: list[Deferred[None]] = []  # process_item and close_spider, waiting
        self._ticker: LoopingCall | None = None
        self._documents = DistinctCounter()  # documents written this run: index/docs
        self.handoff_cpu = CpuTally("handoff")  # items to changes, buffering (reactor thread)
        self.writer_cpu = CpuTally("index_writer")  # the writes: child process or thread

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        if not settings.getbool("INDEX_ENABLED"):
            raise NotConfigured("INDEX_ENABLED is off")
        config = OpenSearchConfig.from_settings(settings)
        quiet_transport_logs()
        policy = RetryPolicy.from_settings(settings, "INDEX")
        dead_letters = DeadLetterFile(settings["INDEX_DEADLETTER_PATH"])
        writer: BulkWriter | ProcessWriter
        hide = settings.getbool("HIDE_UNRESOLVED_WORKS")
        if settings.getbool("INDEX_WRITER_PROCESS"):
            writer = ProcessWriter(config, dead_letters, policy, hide_unresolved=hide)
        else:
            writer = BulkWriter(build_client(config), config.prefix, dead_letters, policy,
                                layout=config.layout, hide_unresolved=hide)
        pipeline = cls(crawler, config, writer, Batching.from_settings(settings), policy,
                       settings.getfloat("OPENSEARCH_OUTAGE_WAIT"))
        crawler.signals.connect(pipeline.work_enriched, signal=work_enriched)
        crawler.signals.connect(pipeline.delivery_ticket, signal=index_ticket)
        crawler.signals.connect(pipeline.flush_soon, signal=index_flush_soon)
        crawler.signals.connect(pipeline.adopt_items, signal=items_adopted)
        return pipeline

    # --- Scrapy hooks ---------------------------------------------------------------------

    async def open_spider(self) -> None:
        """Check the cluster and the aliases; stop the crawl before it starts if they fail."""
        for key in _ZERO_AT_START:
            self.stats.set_value(key, 0)
        try:
            await connect_patiently(self._connect, self.policy, self.outage_wait,
                                    self.config.safe_url)
        except IndexUnavailable as exc:
            logger.error("OpenSearch at %s unavailable: %s; stopping before any page is fetched",
                         self.config.safe_url, exc)
            self.stats.set_value(stat_keys.INDEX_ERROR, str(exc))
            raise CloseSpider(INDEX_UNAVAILABLE) from exc
        self.phase = Phase.RUNNING
        self._ticker = LoopingCall(self._flush)
        self._ticker.start(self.flush_interval, now=False).addErrback(log_failure)

    async def process_item(self, item: Any) -> Any:
        """Buffer the item for indexing; wait only when the buffer is full (backpressure).

        A page item is buffered whole (its researcher and listings); a record it holds
        without the id its document needs is taken out of it and counted as dropped.
        """
        with self.handoff_cpu.measure():
            if not self._add_item(item):
                return item  # not ours to index
        while self.buffer.full() and (self._inflight is not None or self.watch.active):
            self.stats.inc_value(stat_keys.INDEX_BACKPRESSURE_WAITS)  # OpenSearch is the bottleneck
            await self._wait_for_progress()
        return item

    async def close_spider(self) -> None:
        """Flush everything; report what could not be delivered."""
        if self._ticker is not None and self._ticker.running:
            self._ticker.stop()
        self.phase = Phase.CLOSING
        self.watch.closing = True
        if not self.crawler.crawling:
            self.watch.give_up_stopped()
        while self.buffer.changes or self._inflight is not None or self.watch.active:
            self._flush()
            await self._wait_for_progress()
        self.phase = Phase.CLOSED
        self._summarise()
        if isinstance(self.writer, ProcessWriter):
            await maybe_deferred_to_future(deferToThread(self.writer.close))
            self.writer_cpu.add(self.writer.child_cpu_seconds)
        self.handoff_cpu.publish(self.stats)
        self.writer_cpu.publish(self.stats)

    # --- signal handlers ------------------------------------------------------------------

    def adopt_items(self, items: list[Any]) -> None:
        """Signal handler (``items_adopted``): buffer items a dead worker of the job had
        handed to its index stage, as if they had come through this pipeline (they did
        through the dead worker's: no backpressure wait, they are few)."""
        with self.handoff_cpu.measure():
            for item in items:
                try:
                    self._add_item(item)
                except UnindexableItem as exc:  # they passed once; counted all the same
                    logger.warning("adopted item not indexed: %s", exc)

    def work_enriched(self, work_id: str, arxiv: dict[str, Any] | None, status: str,
                      reason: str | None = None, updated_at: str | None = None) -> None:
        """Signal handler: queue an enrichment patch for ``work_id``'s document.

        ``updated_at`` (optional): when the result was obtained from arXiv; pass the
        cache entry's time so a re-crawl leaves the document unchanged.
        """
        try:
            change = enrichment_change(work_id, status=status, arxiv=arxiv, reason=reason,
                                       at=updated_at)
        except (TypeError, ValueError) as exc:  # a patch we cannot even encode
            logger.error("unusable enrichment for %s: %s", work_id, exc)
            self.stats.inc_value(stat_keys.INDEX_INVALID_ITEMS)
            return
        if self.phase is Phase.CLOSED:
            # Came in after the last flush: keep it for `scholarindex replay`.
            self._dead_letter([change], LATE, "enrichment arrived after the indexer closed")
            return
        with self.handoff_cpu.measure():
            self._add([change])

    def delivery_ticket(self) -> int:
        """Signal handler (``index_ticket``): the number of the flush that carries every
        change buffered so far; its ``index_delivered`` (or a later one's) says they are in
        the index or dead-lettered.

        Buffered or held changes go in the next flush, which the timer starts even if no
        other item comes; with nothing buffered, every change is in a flush already started.
        """
        if self.buffer.pending or self.watch.active:
            return self._flushes + 1
        return self._flushes

    def flush_soon(self) -> None:
        """Signal handler (``index_flush_soon``): flush the buffer now, or as soon as the
        flush in flight ends, without waiting for the timer or a full batch."""
        self._flush_wanted = True
        self._flush()

    # --- buffering ------------------------------------------------------------------------

    def _add_item(self, item: Any) -> bool:
        """Buffer a page, work or researcher item's changes; False: not an item to index."""
        if isinstance(item, PageItem):
            self._add_page(item)
        elif is_item(item) and ItemAdapter(item).get("kind") in ("work", "researcher"):
            changes, refused = changes_from_records([item])
            if refused:
                self.stats.inc_value(stat_keys.INDEX_INVALID_ITEMS)
                raise UnindexableItem(str(refused[0][1])) from refused[0][1]
            self._add(changes)
        else:
            return False
        return True

    def _add_page(self, page: PageItem) -> None:
        changes, refused = changes_from_records(records(page))
        if refused:
            self.stats.inc_value(stat_keys.INDEX_INVALID_ITEMS, len(refused))
            if any(record is page.researcher for record, _ in refused):
                raise UnindexableItem(str(refused[0][1]))  # the whole page is dropped
            bad = {id(record) for record, _ in refused}
            page.works = [work for work in page.works if id(work) not in bad]
            self.stats.inc_value(stat_keys.SCRAPY_ITEMS_DROPPED, len(refused))
            self.stats.inc_value(f"{stat_keys.SCRAPY_ITEMS_DROPPED_BY_REASON}"
                                 f"{UnindexableItem.__name__}", len(refused))
            for _, exc in refused:
                logger.warning("not indexed, dropped from the page's items: %s", exc)
        self._add(changes)

    def _add(self, changes: list[Change]) -> None:
        """Buffer the changes (one page's, or one enrichment); flush when the batch is full."""
        if not changes:
            return
        self.buffer.add(changes)
        received = dict.fromkeys(_RECEIVED, 0)
        for change in changes:
            received[change.kind] += 1
            # An arXiv answer is received whether it travels in its listing's change or alone.
            received["enrichment"] += change.enriched
        for kind, count in received.items():
            if count:
                self.stats.inc_value(_RECEIVED[kind], count)
        if self.buffer.batch_ready():
            self._flush()

    # --- flushing -------------------------------------------------------------------------

    def _connect(self) -> None:
        """Runs in a thread: is the cluster there, do we have rights, do the aliases exist."""
        with translate_errors("GET /"):
            self.writer.client.info()
        ensure_aliases(self.writer.client, self.config.prefix, self.config.layout)

    def _flush(self) -> None:
        """Start writing the buffer in a thread, unless a flush is already in flight.

        Nothing is sent during an outage (the held changes go first once it ends); once
        the cluster was given up on, the buffer goes to the dead-letter file.
        """
        if self._inflight is not None or self.watch.active or not self.buffer.changes:
            return
        batch, packed = self.buffer.take()
        if self.given_up is not None:
            self._dead_letter(batch, UNAVAILABLE, self.given_up)
            return
        self._flushes += 1
        self._flush_wanted = False
        inflight: Deferred[Any] = deferToThread(self._write, batch, packed)
        inflight.addCallbacks(self._flushed, self._flush_failed, errbackArgs=(batch,))
        inflight.addBoth(self._flush_done, self._flushes)
        self._inflight = inflight

    def _write(self, batch: list[Change], packed: list[bytes]) -> WriteReport:
        """In a thread: the write (the child's CPU is counted apart, by the child)."""
        if isinstance(self.writer, ProcessWriter):
            return self.writer.write(batch, hold=True, packed=packed)
        with self.writer_cpu.measure():
            return self.writer.write(batch, hold=True)

    def _flushed(self, report: WriteReport) -> None:
        for key, value in report.stats().items():
            self.stats.inc_value(key, value)
        self._documents.add_many([f"{index}/{doc_id}" for index, doc_id in report.written])
        self.stats.set_value(stat_keys.INDEX_DOCS, len(self._documents))
        if report.held:  # the cluster stayed unavailable through the writer's retries
            self.buffer.hold(report.held)
            self.watch.begin(report.held_reason, len(self.buffer.held))
        if report.fatal and not self._refused:
            self._refused = True
            self.stats.set_value(stat_keys.INDEX_ERROR, report.fatal)
            logger.error("OpenSearch at %s refused the indexer: %s; closing the spider",
                         self.config.safe_url, report.fatal)
            self._close_spider()

    def _flush_failed(self, failure: Failure, batch: list[Change]) -> None:
        # A bug in the writer, not an OpenSearch failure: keep every item of the batch.
        logger.error("indexer flush crashed; dead-lettering %d item(s): %s", len(batch),
                     failure.getTraceback())
        self._dead_letter(batch, INTERNAL, f"indexer error: {failure.value!r}")

    def _flush_done(self, _: Any, number: int) -> None:
        self._inflight = None
        if not self.buffer.held and not self.watch.active:
            # Everything buffered before this flush started is delivered (or dead-lettered).
            self.crawler.signals.send_catch_log(index_delivered, number=number)
        self._wake_waiters()
        if self._flush_wanted or self.buffer.batch_ready():
            self._flush()

    def _wake_waiters(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.callback(None)

    async def _wait_for_progress(self) -> None:
        """Until the flush in flight ends, or the outage does (resumed or given up)."""
        if self._inflight is None and not self.watch.active:
            return
        waiter: Deferred[None] = Deferred()
        self._waiters.append(waiter)
        await maybe_deferred_to_future(waiter)

    # --- the end of an outage (``OutageWatch``) -------------------------------------------

    def _back(self, paused: float) -> None:
        """The cluster answers again: the held changes go first, then the rest."""
        held = self.buffer.release_held()
        logger.warning("OpenSearch at %s answers again: crawl resumed after %.1fs paused; "
                       "sending %d held change(s)", self.config.safe_url, paused, held)
        self._wake_waiters()
        self._flush()

    def _give_up(self, why: str) -> None:
        """The outage outlasted the wait (or the crawl is stopping): dead-letter what is
        held and what comes after, end the run."""
        self.given_up = why
        lost = self.buffer.take_all()
        self._dead_letter(lost, UNAVAILABLE, why)
        self.stats.set_value(stat_keys.INDEX_ERROR, why)
        logger.error("%s; %d held change(s) dead-lettered to %s; closing the spider",
                     why, len(lost), self.writer.dead_letters.path)
        self._wake_waiters()
        if self.crawler.crawling:  # else it is closing already
            self._close_spider()

    # --- the end of the run ---------------------------------------------------------------

    def _close_spider(self) -> None:
        deferred_from_coro(self.crawler.engine.close_spider_async(reason=INDEX_UNAVAILABLE)) \
            .addErrback(log_failure)

    def _dead_letter(self, changes: list[Change], code: str, reason: str) -> None:
        letters = [dead_letter(c, code, reason) for c in changes]
        self.writer.dead_letters.write(letters)
        self.stats.inc_value(stat_keys.INDEX_DEAD_LETTERED, len(letters))
        self.stats.inc_value(f"{stat_keys.INDEX_DEAD_LETTERED_BY_CODE}{code}", len(letters))

    def _summarise(self) -> None:
        lost = self.stats.get_value(stat_keys.INDEX_DEAD_LETTERED, 0)
        if lost:
            codes = {k.removeprefix(stat_keys.INDEX_DEAD_LETTERED_BY_CODE): v
                     for k, v in self.stats.get_stats().items()
                     if k.startswith(stat_keys.INDEX_DEAD_LETTERED_BY_CODE)}
            logger.error("%d item(s) were not indexed and went to the dead-letter file %s "
                         "(%s); replay them with `scholarindex replay %s`", lost,
                         self.writer.dead_letters.path, codes, self.writer.dead_letters.path)
        else:
            logger.info("indexed %s listing(s) into %s documents in %s bulk request(s)",
                        self.stats.get_value(stat_keys.INDEX_LISTINGS_DELIVERED, 0),
                        self.stats.get_value(stat_keys.INDEX_DOCS, 0),
                        self.stats.get_value(stat_keys.INDEX_BULK_REQUESTS, 0))
