"""The run's verdict: did this crawl work, and which exit status says so.

Plain Scrapy exits 0 whatever happened. Schedulers (cron, systemd, Scrapyd)
only see the exit status, so at ``spider_closed`` this extension judges the
run from its close reason and stats, stores the verdict in the stats
(``run/ok``, ``run/exit_code``, ``run/reason``) and sends the ``run_verdict``
signal, on which other components act (the page state commits only an ok
run; the run report records the verdict). The project's ``crawl`` command
turns ``run/exit_code`` into the process exit status and logs ``run/reason``
as the last line.

Exit statuses, most severe class first when several apply:

====  =====================================================================
75    another run of the same job holds the lock (EX_TEMPFAIL: try later)
3     a dependency was unavailable (close reason ``*_unavailable``, or the crawl
      stayed paused past ``OPENSEARCH_OUTAGE_WAIT``: ``index/outage_expired``)
4     data lost: documents were dead-lettered (``index/dead_lettered``)
2     usage: no URLs given
1     the run failed: interrupted or closed early, error rate over
      ``RUN_MAX_ERROR_RATE``, or no profile found in a non-empty URL list
0     ok
====  =====================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler

from crawler.job import run_identity
from crawler.signals import run_verdict
from scholarindex.core import stat_keys
from scholarindex.core.exit_codes import (
    EXIT_ALREADY_RUNNING,
    EXIT_DATA_LOST,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    most_severe,
)
from scholarindex.core.stat_keys import stat_count
from scholarindex.core.urls import redact_url


@dataclass(frozen=True)
class Verdict:
    ok: bool
    exit_code: int
    reason: str  # one line, for the log and the run report
    problems: tuple[str, ...] = field(default=())


def _sum_prefix(stats: Mapping[str, Any], prefix: str) -> int:
    return sum(int(v or 0) for k, v in stats.items() if k.startswith(prefix))


def judge(
    stats: Mapping[str, Any],
    close_reason: str,
    *,
    max_error_rate: float,
    dependency_urls: Mapping[str, str] | None = None,
    resumable: bool = False,
) -> Verdict:
    """Judge a crawl from its close reason and stats; pure, so tests need no crawl."""
    problems: list[tuple[int, str]] = []

    def unavailable(dependency: str) -> tuple[int, str]:
        url = (dependency_urls or {}).get(dependency)
        where = f" at {redact_url(url)}" if url else ""
        return EXIT_UNAVAILABLE, f"{dependency} unavailable{where}"

    parsed = stat_count(stats, stat_keys.PROFILES_PARSED)
    unchanged = stat_count(stats, stat_keys.PROFILES_UNCHANGED)
    bad_urls = stat_count(stats, stat_keys.PROFILES_BAD_URL)
    listed = stat_count(stats, stat_keys.PROFILES_REQUESTED) + bad_urls
    # A page whose callback raised lost its items as surely as one that failed to download.
    errors = (stat_count(stats, stat_keys.PROFILES_FAILED) + bad_urls
              + _sum_prefix(stats, stat_keys.SCRAPY_SPIDER_EXCEPTIONS_BY_TYPE))
    outcomes = parsed + unchanged + stat_count(stats, stat_keys.PROFILES_UNRECOGNIZED) + errors
    pages = max(listed, outcomes)

    if close_reason == "already_running":
        problems.append((EXIT_ALREADY_RUNNING, "another run of this job is in progress"))
    elif close_reason.endswith("_unavailable"):
        problems.append(unavailable(close_reason.removesuffix("_unavailable")))
    elif stats.get(stat_keys.INDEX_OUTAGE_EXPIRED):  # the outage came as the crawl closed
        problems.append(unavailable("opensearch"))
    elif close_reason == "shutdown" and stats.get(stat_keys.RUN_WORKER):
        pass  # a worker of a distributed crawl drained: its unfinished pages went back to Redis
    elif close_reason == "shutdown":
        hint = "; run the same command again to resume" if resumable else ""
        problems.append((EXIT_FAILED, f"interrupted (shutdown){hint}"))
    elif close_reason != "finished":
        problems.append((EXIT_FAILED, f"closed early ({close_reason})"))

    dead = stat_count(stats, stat_keys.INDEX_DEAD_LETTERED)
    if dead:
        problems.append((EXIT_DATA_LOST, f"{dead} documents dead-lettered (replay them with "
                                         "`scholarindex replay`)"))
    if pages == 0:
        if close_reason == "finished":  # else the spider may not have read its URLs yet
            problems.append((EXIT_USAGE,
                             "no URLs given (-a urls=URL[,URL...] or -a url_file=PATH)"))
    elif errors / pages > max_error_rate:
        problems.append((EXIT_FAILED, f"{errors}/{pages} pages failed ({errors / pages:.0%}, "
                                      f"over RUN_MAX_ERROR_RATE={max_error_rate:.0%})"))
    # A resumed run skips (dupefilter) the pages its first part already processed.
    done_before = (stat_count(stats, stat_keys.SCRAPY_DUPLICATES_FILTERED)
                   if stats.get(stat_keys.RUN_RESUMED) else 0)
    # A worker of a distributed crawl may find every page taken by the others.
    shared = bool(stats.get(stat_keys.RUN_WORKER))
    if pages and close_reason == "finished" and parsed + unchanged + done_before == 0 \
            and not shared:
        problems.append((EXIT_FAILED, f"no profile found in {pages} pages"))

    if not problems:
        return Verdict(True, EXIT_OK, (
            f"run ok (exit 0): {parsed} profiles parsed, {unchanged} unchanged, "
            f"{stat_count(stats, stat_keys.PROFILES_LISTINGS)} listings, "
            f"{errors} of {pages} pages failed"))
    code = most_severe(code for code, _ in problems)
    texts = tuple(text for _, text in problems)
    return Verdict(False, code, f"run failed (exit {code}): " + "; ".join(texts), texts)


class RunVerdict:
    """Judge the run at spider_closed; store the verdict and announce it."""

    def __init__(self, crawler: Crawler, max_error_rate: float) -> None:
        self.crawler = crawler
        self.max_error_rate = max_error_rate
        self.verdict: Verdict | None = None
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RunVerdict:
        rate = crawler.settings.getfloat("RUN_MAX_ERROR_RATE")
        return cls(crawler, rate)

    def spider_opened(self, spider: Spider) -> None:
        run_identity(self.crawler)  # records run/resumed, which judge() reads

    def spider_closed(self, spider: Spider, reason: str) -> None:
        self.close(reason)

    def close(self, reason: str) -> Verdict:
        """The run's verdict, judged and announced (``run_verdict``) once, by whichever
        comes first: this extension's ``spider_closed`` or another's that needs the
        verdict in its own (the run report), so neither depends on handler order."""
        if self.verdict is not None:
            return self.verdict
        settings = self.crawler.settings
        stats = self.crawler.stats
        verdict = judge(
            stats.get_stats(),
            reason,
            max_error_rate=self.max_error_rate,
            dependency_urls={"opensearch": settings.get("OPENSEARCH_URL") or "",
                             "arxiv": settings.get("ARXIV_API_URL") or ""},
            resumable=bool(settings.get("JOBDIR")),
        )
        stats.set_value(stat_keys.RUN_OK, verdict.ok)
        stats.set_value(stat_keys.RUN_EXIT_CODE, verdict.exit_code)
        stats.set_value(stat_keys.RUN_REASON, verdict.reason)
        self.verdict = verdict
        self.crawler.signals.send_catch_log(signal=run_verdict, verdict=verdict, reason=reason)
        return verdict
