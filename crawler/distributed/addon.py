"""Scrapy add-on: with ``REDIS_URL`` set, the crawl joins the shared frontier in Redis.

Without it the settings are left as they are: Scrapy's scheduler, nothing from Redis
imported.
"""

from __future__ import annotations

from scrapy.settings import BaseSettings

SCHEDULER = "crawler.distributed.scheduler.RedisScheduler"
SPIDER_MIDDLEWARES = {
    # Closest to the engine: sees every item the page yields after the other middlewares.
    "crawler.distributed.tracking.PageTracking": 10,
    "crawler.distributed.seeding.SeedOnce": 20,
}


def distributed_enabled(settings: BaseSettings) -> bool:
    return bool(str(settings.get("REDIS_URL") or "").strip())


class DistributedCrawl:
    """Registered in ``ADDONS`` after the environment add-on (which may set REDIS_URL)."""

    def update_settings(self, settings: BaseSettings) -> None:
        if not distributed_enabled(settings):
            return
        settings.set("SCHEDULER", SCHEDULER, priority="addon")
        # Follows each leased page until its items are through the pipelines (the scheduler
        # and the tracking middleware find it with crawler.get_extension).
        from crawler.distributed.tracking import PageTracker

        settings.set_in_component_priority_dict("EXTENSIONS", PageTracker, 0)
        middlewares = settings.getdict("SPIDER_MIDDLEWARES")
        settings.set("SPIDER_MIDDLEWARES", {**middlewares, **SPIDER_MIDDLEWARES},
                     priority="addon")
        # A JOBDIR (the cron and systemd recipes give one) is harmless: this scheduler keeps
        # no requests there, Redis does; the run id comes from the job's record.
