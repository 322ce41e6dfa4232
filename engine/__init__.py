"""A real OpenSearch for development, tests, the demo and the benchmarks (checkout only).

``python -m engine`` (``make opensearch``) runs nodes in the foreground; the test suite,
``make demo`` and the benchmarks start them through ``engine.cluster.LocalCluster``.
"""
