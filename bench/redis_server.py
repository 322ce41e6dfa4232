"""A real ``redis-server`` for the benchmark and the tests: a free 127.0.0.1 port, the
append-only file in a folder of its own.

    with RedisServer(tmp_path / "redis") as server:
        server.url            # redis://127.0.0.1:PORT/0
        server.kill()         # SIGKILL, as a crash
        server.start()        # again, on the same port and append-only file

Debian's ``redis-server`` (``make redis-deps``); the tests skip where it is absent.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path

import redis

from engine.cluster import free_port

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def redis_available() -> bool:
    return Path(REDIS_SERVER).is_file()


class RedisServer:
    def __init__(self, directory: Path, port: int | None = None,
                 fsync: str = "always") -> None:
        self.directory = directory
        self.fsync = fsync  # appendfsync: "always" loses nothing on SIGKILL
        self.directory.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, socket_timeout=5)

    def start(self, timeout: float = 10.0) -> RedisServer:
        if self.process is not None and self.process.poll() is None:
            # A second server on the same port would fail to bind while ping answered from
            # the first, which then outlived stop(): one server per instance.
            raise RuntimeError(f"redis-server already running on port {self.port}")
        self.process = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1",
             "--appendonly", "yes", "--appendfsync", self.fsync, "--save", "",
             "--dir", str(self.directory), "--daemonize", "no", "--protected-mode", "no",
             "--logfile", str(self.directory / "redis.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.client().ping():
                    return self
            except redis.exceptions.RedisError:  # not listening yet, or loading the AOF
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}: "
                                   f"{(self.directory / 'redis.log').read_text()[-2000:]}")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: no shutdown save, only what the append-only file has."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
