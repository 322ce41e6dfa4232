"""The run report: what a crawl did, logged at the end and written as JSON.

    scrapy crawl profiles -a url_file=urls.txt -s RUN_REPORT=reports/%(job)s-%(time)s.json

The report is a plain dict built by ``build_report`` from the stats (pure, so
it is tested without a crawl). ``report_to_document`` shapes it for the
``{INDEX_PREFIX}crawl-runs`` index that ``scholarindex status`` reads.

When indexing is on, the report is stored there at spider close, in a thread and
within ``OPENSEARCH_TIMEOUT`` seconds: one document per run part (``_id``
``{run_id}@{started_at}``, plus ``@{worker}`` for a worker of a distributed crawl,
whose workers share the job's ``run_id``), so the two parts of a paused and resumed run, which
share ``run_id``, add up. The alias points at a versioned index built from
``index_mappings/crawl-runs.json``, created on first use by
``scholarindex.indexing.indices.ensure_alias`` like the works and researchers ones. A report
that cannot be stored is a warning and the stat ``run/report_not_indexed``, never
a failed run (the JSON file and the log line still carry it).
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from itemadapter import ItemAdapter
from opensearchpy import OpenSearch
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.error import TimeoutError as DeferredTimeout
from twisted.internet.threads import deferToThread

from crawler.close_reasons import INDEX_UNAVAILABLE
from crawler.extensions.itemsignals import ITEM_SIGNALS, watch_items
from crawler.extensions.resolution import WorkResolution
from crawler.extensions.verdict import RunVerdict, Verdict
from crawler.job import run_identity
from crawler.signals import run_verdict
from scholarindex.core import stat_keys
from scholarindex.core.distinct import DistinctCounter
from scholarindex.core.items import PageItem
from scholarindex.core.stat_keys import stat_count
from scholarindex.indexing.client import build_client, translate_errors
from scholarindex.indexing.connection import DEFAULT_LAYOUT, IndexLayout, OpenSearchConfig
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.indexing.indices import RUNS_INDEX, alias_name, ensure_alias

logger = logging.getLogger(__name__)



def _by_suffix(stats: Mapping[str, Any], prefix: str) -> dict[str, int]:
    return {k.removeprefix(prefix): int(v) for k, v in sorted(stats.items())
            if k.startswith(prefix)}


RESOLUTION_PREFIX = "resolution/"


def resolution_section(stats: Mapping[str, Any]) -> dict[str, Any]:
    """The resolution pass's own figures (``crawler.extensions.resolution``): mode,
    seconds, documents read, ...; empty when no pass ran."""
    return {k.removeprefix(RESOLUTION_PREFIX): v for k, v in sorted(stats.items())
            if k.startswith(RESOLUTION_PREFIX)}


def build_report(
    stats: Mapping[str, Any],
    *,
    verdict: Verdict,
    close_reason: str,
    started_at: datetime,
    finished_at: datetime,
    duration_seconds: float,
    distinct_works: int,
    distinct_works_exact: bool,
    spider: str,
) -> dict[str, Any]:
    """The run's summary as a JSON-ready dict."""
    # Robots.txt fetches are not pages; everything else the downloader got is.
    fetched = (stat_count(stats, stat_keys.SCRAPY_RESPONSES)
               - stat_count(stats, stat_keys.SCRAPY_ROBOTSTXT_RESPONSES))
    return {
        "report_id": uuid.uuid4().hex,  # one per process: a resumed run has two parts
        "job": stats.get(stat_keys.RUN_JOB),
        "run_id": stats.get(stat_keys.RUN_ID),  # shared by the parts of a paused and resumed run
        "resumed": bool(stats.get(stat_keys.RUN_RESUMED)),
        "spider": spider,
        "started_at": started_at.isoformat(timespec="seconds"),
        "finished_at": finished_at.isoformat(timespec="seconds"),
        "duration_seconds": round(duration_seconds, 3),
        "ok": verdict.ok,
        "exit_code": verdict.exit_code,
        "exit_reason": verdict.reason,
        "close_reason": close_reason,
        "pages": {
            "listed": (stat_count(stats, stat_keys.PROFILES_REQUESTED)
                       + stat_count(stats, stat_keys.PROFILES_BAD_URL)),
            "fetched": fetched,
            "parsed": stat_count(stats, stat_keys.PROFILES_PARSED),
            "unchanged": stat_count(stats, stat_keys.PROFILES_UNCHANGED),
            "unrecognized": stat_count(stats, stat_keys.PROFILES_UNRECOGNIZED),
            "truncated": stat_count(stats, stat_keys.PROFILES_TRUNCATED),
            # Pages read with a problem the crawl-runs mapping has no field for: JSON only.
            "untitled": stat_count(stats, stat_keys.PROFILES_UNTITLED),
            "ambiguous": stat_count(stats, stat_keys.PROFILES_AMBIGUOUS),
            "failed": stat_count(stats, stat_keys.PROFILES_FAILED),
            "failed_by_reason": _by_suffix(stats, stat_keys.PROFILES_FAILED_BY_REASON),
            "bad_url": stat_count(stats, stat_keys.PROFILES_BAD_URL),
            "not_modified": stat_count(stats, stat_keys.INCREMENTAL_NOT_MODIFIED),
            "bytes": stat_count(stats, stat_keys.SCRAPY_RESPONSE_BYTES),
        },
        "researchers": stat_count(stats, stat_keys.PROFILES_PARSED),
        "listings": stat_count(stats, stat_keys.PROFILES_LISTINGS),
        # Listings the pages announce and the parser did not read (JSON only).
        "listings_unread": stat_count(stats, stat_keys.PROFILES_LISTINGS_UNREAD),
        "distinct_works": distinct_works,
        "distinct_works_exact": distinct_works_exact,
        "items_scraped": stat_count(stats, stat_keys.SCRAPY_ITEMS_SCRAPED),
        "merged": stat_count(stats, stat_keys.INDEX_MERGED),
        "enriched": stat_count(stats, stat_keys.ARXIV_MATCHED),
        "pending": stat_count(stats, stat_keys.ARXIV_PENDING),
        "indexed": stat_count(stats, stat_keys.INDEX_DOCS),
        "listings_delivered": stat_count(stats, stat_keys.INDEX_LISTINGS_DELIVERED),
        "unlisted": stat_count(stats, stat_keys.INDEX_UNLISTED),
        "docs_deleted": stat_count(stats, stat_keys.INDEX_DOCS_DELETED),
        "dead_lettered": stat_count(stats, stat_keys.INDEX_DEAD_LETTERED),
        # Seconds the crawl was paused because OpenSearch could not take writes. In this
        # JSON only: the crawl-runs mapping is strict (report_to_document leaves it out).
        "index_paused_seconds": round(float(stats.get(stat_keys.INDEX_PAUSED_SECONDS) or 0), 3),
        "dropped": _by_suffix(stats, stat_keys.SCRAPY_ITEMS_DROPPED_BY_REASON),
        "errors_logged": stat_count(stats, stat_keys.SCRAPY_ERRORS_LOGGED),
        # The distributed crawl: this worker of the job (its parts share run_id); JSON only.
        **({"worker": stats[stat_keys.RUN_WORKER]} if stats.get(stat_keys.RUN_WORKER) else {}),
    }


# Report fields the crawl-runs mapping (strict) lacks: in the JSON file and the log line
# only. An index made from an older mapping would refuse documents that carried them.
_JSON_ONLY = ("index_paused_seconds", "listings_unread")
_JSON_ONLY_PAGES = ("untitled", "ambiguous")


def report_to_document(report: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the report shaped for the crawl-runs index (the input is not changed).

    Maps keyed by reason become lists of {reason, count}: a mapping with one field
    per drop reason would grow without bound.
    """
    doc = json.loads(json.dumps(report))  # deep copy of plain JSON data
    doc["@timestamp"] = doc["finished_at"]
    for key in _JSON_ONLY:
        doc.pop(key, None)
    for key in _JSON_ONLY_PAGES:
        doc["pages"].pop(key, None)
    doc.pop("worker", None)  # not in the mapping either; the worker is part of the _id
    doc["dropped"] = [{"reason": k, "count": v} for k, v in report["dropped"].items()]
    doc["pages"]["failed_by_reason"] = [
        {"reason": k, "count": v} for k, v in report["pages"]["failed_by_reason"].items()
    ]
    return doc


def run_document_id(report: Mapping[str, Any]) -> str:
    """The crawl-runs ``_id`` of one run part: its run id and when the part started (and,
    in a distributed crawl, which worker it was: workers of a job start together)."""
    worker = f"@{report['worker']}" if report.get("worker") else ""
    return f"{report['run_id']}@{report['started_at']}{worker}"


def store_report(client: OpenSearch, prefix: str, report: Mapping[str, Any],
                 budget: float, layout: IndexLayout = DEFAULT_LAYOUT) -> str:
    """Store the report in ``{prefix}crawl-runs`` within ``budget`` seconds; returns the _id.

    Blocking: call it in a thread. Raises ``IndexUnavailable`` when the cluster
    refuses or fails, ``TimeoutError`` when the budget runs out.
    """
    deadline = time.monotonic() + budget

    def remaining() -> float:  # each request gets what is left, so the whole call is bounded
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"storing the run report took over {budget:g} s")
        return left

    ensure_alias(client, prefix, RUNS_INDEX, remaining, layout)
    alias = alias_name(prefix, RUNS_INDEX)
    doc_id = run_document_id(report)
    with translate_errors(f"index run report into {alias}"):
        client.index(index=alias, id=doc_id, body=report_to_document(report),
                     request_timeout=remaining())
    return doc_id


def summary_line(report: Mapping[str, Any]) -> str:
    pages = report["pages"]
    dropped = ", ".join(f"{k} {v}" for k, v in report["dropped"].items()) or "none"
    works = report["distinct_works"]
    paused = report.get("index_paused_seconds") or 0
    pause = f"; paused {paused:.1f} s while OpenSearch was unavailable" if paused else ""
    problems = _page_problems(report)
    return (
        f"run report for job {report['job']}: pages fetched {pages['fetched']} "
        f"(parsed {pages['parsed']}, unchanged {pages['unchanged']}, "
        f"unrecognized {pages['unrecognized']}, failed {pages['failed']}){problems}; "
        f"researchers {report['researchers']}, listings {report['listings']}, distinct works "
        f"{works if report['distinct_works_exact'] else f'~{works}'}, merged {report['merged']}, "
        f"enriched {report['enriched']}, pending {report['pending']}, indexed "
        f"{report['indexed']}, dead-lettered {report['dead_lettered']}, dropped: {dropped}; "
        f"{report['duration_seconds']:.1f} s{pause}; {report['close_reason']}"
    )


def _page_problems(report: Mapping[str, Any]) -> str:
    """Pages read with a problem, when there are any (a report written by an
    older version may lack the counts)."""
    pages = report["pages"]
    parts = []
    if pages.get("truncated"):
        unread = report.get("listings_unread")
        parts.append(f"{pages['truncated']} short of their listing count"
                     + (f" ({unread} listings unread)" if unread else ""))
    if pages.get("untitled"):
        parts.append(f"{pages['untitled']} with untitled listings left out")
    if pages.get("ambiguous"):
        parts.append(f"{pages['ambiguous']} split by a guess")
    return f"; page problems: {', '.join(parts)}" if parts else ""


def write_report(report: Mapping[str, Any], path: Path) -> None:
    """Write atomically: a scheduler that reads the file never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # open() honours the umask
    with tmp.open("w", encoding="utf-8") as out:
        json.dump(report, out, indent=2, ensure_ascii=False)
        out.write("\n")
    os.replace(tmp, path)


class RunReport:
    """Collect what the stats do not hold (distinct works, timing); report on the verdict."""

    def __init__(self, crawler: Crawler, path_template: str,
                 index_config: OpenSearchConfig | None = None) -> None:
        self.crawler = crawler
        self.path_template = path_template
        self.index_config = index_config  # None: indexing is off, the report is not stored
        self.works = DistinctCounter()
        self.started_at = datetime.now(UTC)
        self.started = time.monotonic()
        self.report: dict[str, Any] | None = None
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        watch_items(crawler, self.item_seen, *ITEM_SIGNALS)
        crawler.signals.connect(self.on_verdict, signal=run_verdict)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RunReport:
        settings = crawler.settings
        indexing = settings.getbool("INDEX_ENABLED")
        config = OpenSearchConfig.from_settings(settings) if indexing else None
        return cls(crawler, settings["RUN_REPORT"], config)

    def spider_opened(self, spider: Spider) -> None:
        run_identity(self.crawler)
        self.started_at = datetime.now(UTC)
        self.started = time.monotonic()

    def item_seen(self, item: Any, **kwargs: Any) -> None:
        # Every item ends in exactly one of scraped, dropped or error: count each once.
        if isinstance(item, PageItem):
            self.works.add_many([work.work_id for work in item.works if work.work_id])
            return
        adapter = ItemAdapter(item)
        if adapter.get("kind") == "work" and adapter.get("work_id"):
            self.works.add(str(adapter["work_id"]))

    def on_verdict(self, verdict: Verdict, reason: str) -> None:
        stats = self.crawler.stats.get_stats()
        spider = self.crawler.spider
        self.report = build_report(
            stats,
            verdict=verdict,
            close_reason=reason,
            started_at=self.started_at,
            finished_at=datetime.now(UTC),
            duration_seconds=time.monotonic() - self.started,
            distinct_works=len(self.works),
            distinct_works_exact=self.works.exact,
            spider=spider.name if spider else "",
        )
        logger.info(summary_line(self.report))
        self._write()

    def _write(self) -> None:
        if not self.path_template or self.report is None:
            return
        path = Path(self.path_template % {
            "job": self.report["job"],
            "time": self.started_at.strftime("%Y-%m-%dT%H-%M-%S"),
        })
        try:
            write_report(self.report, path)
        except OSError as exc:
            # Logged loudly; the verdict stands (the summary line above has the counts).
            logger.error("could not write the run report to %s: %s", path, exc)
        else:
            logger.info("run report written to %s", path)

    async def spider_closed(self, spider: Spider, reason: str) -> None:
        """Add the resolution pass's figures, then store the report in the crawl-runs
        index, off the reactor thread; never fatal."""
        verdicts = self.crawler.get_extension(RunVerdict)
        if verdicts is not None:  # the report is built on the verdict (``on_verdict``)
            verdicts.close(reason)
        if self.report is None:
            return
        resolution = self.crawler.get_extension(WorkResolution)
        if resolution is not None:  # the pass runs after the verdict: its figures, after
            await maybe_deferred_to_future(resolution.finished(reason))
            if section := resolution_section(self.crawler.stats.get_stats()):
                self.report["resolution"] = section
                self._write()
        if self.index_config is None:
            return
        config = self.index_config
        alias = alias_name(config.prefix, RUNS_INDEX)
        if reason == INDEX_UNAVAILABLE:
            self._not_stored(alias, "OpenSearch was unavailable during the run")
            return
        from twisted.internet import reactor  # the running one (no import-time install)

        client = build_client(config)
        # The thread bounds itself by the budget; the Deferred's timeout is a safety net.
        stored = deferToThread(store_report, client, config.prefix, self.report, config.timeout,
                               config.layout)
        stored.addTimeout(config.timeout + 5, reactor)
        try:
            doc_id = await maybe_deferred_to_future(stored)
        except (IndexUnavailable, TimeoutError, DeferredTimeout, OSError, ValueError) as exc:
            self._not_stored(alias, str(exc) or type(exc).__name__)
        else:
            logger.info("run report stored in %s as %s", alias, doc_id)

    def _not_stored(self, alias: str, why: str) -> None:
        self.crawler.stats.set_value(stat_keys.RUN_REPORT_NOT_INDEXED, 1)
        logger.warning("run report not stored in %s: %s (the log line above and RUN_REPORT "
                       "keep it)", alias, why)
