"""``scrapy crawl`` with an exit status a scheduler can act on.

Scrapy's own crawl command exits 0 whatever happened to the run. This one takes
the job's lock, runs the crawl as Scrapy does, then reads the verdict that
``crawler.extensions.verdict.RunVerdict`` stored in the stats, logs its one-line
reason as the very last log line and exits with its code (the table is in
``crawler/extensions/verdict.py`` and docs/deploy/README.md).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.crawler import Crawler
from scrapy.exceptions import UsageError
from scrapy.settings import BaseSettings

from crawler.commands.runlock import RunLock
from crawler.distributed.addon import distributed_enabled
from crawler.extensions.verdict import judge
from crawler.job import job_name, state_dir
from scholarindex.core import stat_keys
from scholarindex.core.exit_codes import (
    EXIT_ALREADY_RUNNING,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNAVAILABLE,
)

logger = logging.getLogger("scholarindex.run")


class Command(ScrapyCrawlCommand):
    def short_desc(self) -> str:
        return "Run a spider; the exit status says whether the run worked"

    def long_desc(self) -> str:
        return (
            "Run a spider of the project, as Scrapy's crawl does, and exit with a status a "
            "scheduler can act on: 0 ok, 1 run failed, 2 usage, 3 a dependency unavailable, "
            "4 data lost (dead-lettered), 75 another run of the same job is in progress. "
            "The reason is the last log line."
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give one spider name" if args else "")
        url_file = opts.spargs.get("url_file")
        if url_file and not Path(url_file).is_file():
            raise UsageError(f"url_file {url_file!r}: no such file")
        assert self.crawler_process is not None and self.settings is not None
        job = job_name(self.settings, opts.spargs)
        # One name for every component of this run: lock, page state, report.
        self.settings.set("RUN_JOB", job, priority="cmdline")

        distributed = distributed_enabled(self.settings)
        if distributed:
            # Workers of one job run together (the lock is the job's record in Redis); a
            # different job under the same name does not.
            refusal = _distributed_refusal(self.settings, job, opts.spargs)
            if isinstance(refusal, tuple):
                self._finish(*refusal)
                return
            # The run joined: if it finishes before this worker is up, it is not restarted.
            self.settings.set("REDIS_RUN_ID", refusal, priority="cmdline")
        lock = RunLock(state_dir(self.settings) / f"{job}.lock")
        if self.settings.getbool("RUN_LOCK") and not distributed and not lock.acquire():
            self._finish(EXIT_ALREADY_RUNNING, (
                f"run refused (exit {EXIT_ALREADY_RUNNING}): job {job} is already running "
                f"({lock.holder()}; lock {lock.path}); try again when it has finished"))
            return
        try:
            try:
                crawler = self._create_crawler(args[0])
            except KeyError as exc:  # no such spider: a usage error, not a traceback
                raise UsageError(str(exc).strip("'\"")) from None
            self.crawler_process.crawl(crawler, **opts.spargs)
            self.crawler_process.start()
        finally:
            lock.release()
        self._finish(*self._verdict(crawler))

    def _verdict(self, crawler: Crawler) -> tuple[int, str]:
        assert self.crawler_process is not None and self.settings is not None
        try:
            stats = crawler.stats.get_stats()
        except RuntimeError:  # the crawler never got as far as creating its stats
            stats = None
        if self.crawler_process.bootstrap_failed or stats is None:
            return EXIT_FAILED, (f"run failed (exit {EXIT_FAILED}): the crawl could not start "
                                 "(see the error above)")
        if stat_keys.RUN_EXIT_CODE in stats:
            return int(stats[stat_keys.RUN_EXIT_CODE]), str(stats[stat_keys.RUN_REASON])
        # RunVerdict not enabled, or the crawl was killed before spider_closed: judge here.
        rate = self.settings.getfloat("RUN_MAX_ERROR_RATE")
        reason = str(stats.get(stat_keys.SCRAPY_FINISH_REASON) or "killed")
        verdict = judge(stats, reason, max_error_rate=rate)
        return verdict.exit_code, verdict.reason

    def _finish(self, code: int, reason: str) -> None:
        # Logged after the reactor stopped, so nothing Scrapy logs can come after it.
        logger.log(logging.INFO if code == EXIT_OK else logging.ERROR, reason)
        self.exitcode = code


def _distributed_refusal(settings: BaseSettings, job: str,
                         spargs: dict[str, str]) -> tuple[int, str] | str:
    """Join the job in Redis: the run id joined, or (exit code, reason) when this worker
    may not run."""
    # Imported here: without REDIS_URL the crawl never loads Redis.
    from crawler.distributed.scheduler import job_definition
    from scholarindex.distributed.connection import RedisConfig, RedisLink, RedisUnavailable
    from scholarindex.distributed.jobs import join
    from scholarindex.distributed.keys import JobKeys

    config = RedisConfig.from_settings(settings)
    link = RedisLink.from_config(config)
    definition = job_definition(spargs.get("urls"), spargs.get("url_file"), spargs.get("follow"))
    try:
        joined = join(link, JobKeys(config.key_prefix, job), definition)
    except RedisUnavailable as exc:
        return EXIT_UNAVAILABLE, f"run failed (exit {EXIT_UNAVAILABLE}): {exc}"
    finally:
        link.close()
    if joined.refused:
        return EXIT_ALREADY_RUNNING, (
            f"run refused (exit {EXIT_ALREADY_RUNNING}): job {job} is running on Redis at "
            f"{config.safe_url} with a different URL list or options; its workers must all "
            "run the same command. Try again when it has finished, or use another job name")
    return joined.run_id
