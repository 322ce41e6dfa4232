"""Local stand-ins for the outside world, used by the demo and the tests.

Real servers on 127.0.0.1 (a profile site, an arXiv-compatible API, an
OpenSearch-compatible server), never mocks: the product talks to them over HTTP
exactly as it talks to the real thing.
"""
