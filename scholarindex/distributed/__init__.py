"""Coordination of a crawl spread over many workers, on Redis (``REDIS_URL``).

A library (no Scrapy): ``connection`` (settings, a client that rides out a Redis
restart), ``frontier`` (a job's request queue, seen-set and leases), ``jobs`` (a job's
record, its workers, what ``scholarindex status`` shows) and ``ratelimit`` (one
request slot shared by every worker). The Scrapy side is ``crawler/distributed/``.
Written on ``redis-py`` rather than scrapy-redis: see docs/distributed.md.
"""
