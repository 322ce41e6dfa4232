"""Benchmarks: not shipped, not run by ``make test`` (each has a small version in tests/).

- ``python -m bench.run`` (``make bench``): the whole crawl pipeline on a synthetic
  10,000-profile site, each figure against its target (``bench-results.json``);
- ``python -m bench.indexing`` (``make bench-indexing``): bulk writer throughput;
- ``python -m bench.judgment``: the index writer's CPU with the judgment of new works
  (``HIDE_UNRESOLVED_WORKS``) on a first crawl of a bench site, and without it;
- ``python -m bench.search`` (``make bench-search``): search latency, p50/p95;
- ``python -m bench.reindex`` (``make bench-reindex``): zero-downtime reindex time;
- ``python -m bench.distributed`` (``make bench-distributed``): the crawl by 1, 2 and
  4 workers on one Redis (``redis_server`` starts a local ``redis-server``);
- ``python -m bench.dedupe`` (``make bench-dedupe``): work resolution on labelled data
  (DBLP-ACM, Cora), crawled end to end; ``python -m bench.er.evaluate`` scores it
  offline in seconds (``bench.er``: readers, sites, scoring);
- ``python -m bench.scale`` (``make bench-scale``): 1,000,000 works built through the
  bulk path, 1% of the profiles re-crawled, the resolution pass (default and full):
  its time and memory, search latency and papers shown twice meanwhile, size per
  work (``scale_pass``: the pass alone in a process of its own).

Each takes ``--help``; those that index take ``--use-env`` to measure the cluster
``OPENSEARCH_URL`` names instead of a local OpenSearch node (``cluster``: a real
node, ``engine.cluster.LocalCluster``).
For ``run``: ``generate`` writes the site, ``serve`` serves it from 127.0.0.1,
``spiders`` holds the do-nothing spider the raw fetch rate is measured with,
``arxiv`` is a fast arXiv stand-in, ``sink`` an index stand-in that answers without
indexing (the crawl's side alone), and
``launch`` measures a crawl's own memory. ``search_data`` builds the fixture and
synthetic indices that ``search``, ``reindex`` and the web UI and ops tests use.
"""
