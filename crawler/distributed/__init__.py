"""The distributed crawl (``REDIS_URL`` set): many workers, one frontier in Redis.

Every worker runs the same ``scrapy crawl profiles -a job=NAME -a url_file=F``; the
add-on (``addon``) swaps in the Redis scheduler (``scheduler``) and two spider
middlewares: ``seeding`` puts the URL list in once per run of the job, ``tracking``
follows each leased page until its items are through the pipelines, and the
scheduler acknowledges it when the index has them: where each page stands is its
``pagebook``, one Redis call of a kind in flight a ``singleflight``, and what an idle
worker waits for an ``idlereport``. The frontier itself (queue,
seen-set, leases) is the ``distributed`` library. docs/distributed.md has the design.
Without ``REDIS_URL`` none of this is loaded.
"""
