"""Benchmarks of the crawl pipeline on a synthetic profile site (issue 8).

    python -m bench.run [--profiles 10000] [--quick]

``generate`` writes the site, ``serve`` serves it from 127.0.0.1, ``spiders`` holds
the do-nothing spider the raw fetch rate is measured with, ``run`` measures.
"""
