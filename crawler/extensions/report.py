"""The run report: what a crawl did, logged at the end and written as JSON.

    scrapy crawl profiles -a url_file=urls.txt -s RUN_REPORT=reports/%(job)s-%(time)s.json

The report is a plain dict built by ``build_report`` from the stats (pure, so
it is tested without a crawl). ``report_to_document`` shapes it for the
``{INDEX_PREFIX}crawl-runs`` index that ``scholarindex status`` reads.

TODO(indexing): when the indexing package lands, store the report on
``run_verdict`` with one call, e.g.
``client.index(index=f"{prefix}crawl-runs", id=doc["report_id"], body=doc)``
where ``doc = report_to_document(report)``; a failure to store it is logged,
never fatal (the JSON file and the log line still carry it).
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
from scrapy import Spider, signals
from scrapy.crawler import Crawler

from crawler.extensions.distinct import DistinctCounter
from crawler.extensions.job import run_identity
from crawler.extensions.verdict import Verdict, run_verdict

logger = logging.getLogger(__name__)


def _n(stats: Mapping[str, Any], key: str) -> int:
    return int(stats.get(key) or 0)


def _by_suffix(stats: Mapping[str, Any], prefix: str) -> dict[str, int]:
    return {k.removeprefix(prefix): int(v) for k, v in sorted(stats.items())
            if k.startswith(prefix)}


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
    fetched = _n(stats, "response_received_count") - _n(stats, "robotstxt/response_count")
    return {
        "report_id": uuid.uuid4().hex,  # one per process: a resumed run has two parts
        "job": stats.get("run/job"),
        "run_id": stats.get("run/id"),  # shared by the parts of a paused and resumed run
        "resumed": bool(stats.get("run/resumed")),
        "spider": spider,
        "started_at": started_at.isoformat(timespec="seconds"),
        "finished_at": finished_at.isoformat(timespec="seconds"),
        "duration_seconds": round(duration_seconds, 3),
        "ok": verdict.ok,
        "exit_code": verdict.exit_code,
        "exit_reason": verdict.reason,
        "close_reason": close_reason,
        "pages": {
            "listed": _n(stats, "profiles/requested") + _n(stats, "profiles/bad_url"),
            "fetched": fetched,
            "parsed": _n(stats, "profiles/parsed"),
            "unchanged": _n(stats, "profiles/unchanged"),
            "unrecognized": _n(stats, "profiles/unrecognized"),
            "truncated": _n(stats, "profiles/truncated"),
            "failed": _n(stats, "profiles/failed"),
            "failed_by_reason": _by_suffix(stats, "profiles/failed/"),
            "bad_url": _n(stats, "profiles/bad_url"),
            "not_modified": _n(stats, "incremental/not_modified"),
            "bytes": _n(stats, "downloader/response_bytes"),
        },
        "researchers": _n(stats, "profiles/parsed"),
        "listings": _n(stats, "profiles/listings"),
        "distinct_works": distinct_works,
        "distinct_works_exact": distinct_works_exact,
        "items_scraped": _n(stats, "item_scraped_count"),
        "merged": _n(stats, "index/merged"),
        "enriched": _n(stats, "arxiv/matched"),
        "pending": _n(stats, "arxiv/pending"),
        "indexed": _n(stats, "index/docs"),
        "listings_delivered": _n(stats, "index/listings_delivered"),
        "dead_lettered": _n(stats, "index/dead_lettered"),
        "dropped": _by_suffix(stats, "item_dropped_reasons_count/"),
        "errors_logged": _n(stats, "log_count/ERROR"),
    }


def report_to_document(report: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the report shaped for the crawl-runs index (the input is not changed).

    Maps keyed by reason become lists of {reason, count}: a mapping with one field
    per drop reason would grow without bound.
    """
    doc = json.loads(json.dumps(report))  # deep copy of plain JSON data
    doc["@timestamp"] = doc["finished_at"]
    doc["dropped"] = [{"reason": k, "count": v} for k, v in report["dropped"].items()]
    doc["pages"]["failed_by_reason"] = [
        {"reason": k, "count": v} for k, v in report["pages"]["failed_by_reason"].items()
    ]
    return doc


def summary_line(report: Mapping[str, Any]) -> str:
    pages = report["pages"]
    dropped = ", ".join(f"{k} {v}" for k, v in report["dropped"].items()) or "none"
    works = report["distinct_works"]
    return (
        f"run report for job {report['job']}: pages fetched {pages['fetched']} "
        f"(parsed {pages['parsed']}, unchanged {pages['unchanged']}, "
        f"unrecognized {pages['unrecognized']}, failed {pages['failed']}); "
        f"researchers {report['researchers']}, listings {report['listings']}, distinct works "
        f"{works if report['distinct_works_exact'] else f'~{works}'}, merged {report['merged']}, "
        f"enriched {report['enriched']}, pending {report['pending']}, indexed "
        f"{report['indexed']}, dead-lettered {report['dead_lettered']}, dropped: {dropped}; "
        f"{report['duration_seconds']:.1f} s; {report['close_reason']}"
    )


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

    def __init__(self, crawler: Crawler, path_template: str) -> None:
        self.crawler = crawler
        self.path_template = path_template
        self.works = DistinctCounter()
        self.started_at = datetime.now(UTC)
        self.started = time.monotonic()
        self.report: dict[str, Any] | None = None
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(self.item_seen, signal=signal)
        crawler.signals.connect(self.on_verdict, signal=run_verdict)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RunReport:
        return cls(crawler, crawler.settings.get("RUN_REPORT") or "")

    def spider_opened(self, spider: Spider) -> None:
        run_identity(self.crawler)
        self.started_at = datetime.now(UTC)
        self.started = time.monotonic()

    def item_seen(self, item: Any, **kwargs: Any) -> None:
        # Every item ends in exactly one of scraped, dropped or error: count each once.
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
        if self.path_template:
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
