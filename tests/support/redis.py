"""The tests' redis-server: the benchmark's launcher (``bench.redis_server``)."""

from bench.redis_server import RedisServer, free_port, redis_available

__all__ = ["RedisServer", "free_port", "redis_available"]
