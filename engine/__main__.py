"""``make opensearch``: real OpenSearch nodes in the foreground until Ctrl+C or SIGTERM.

    python -m engine [--nodes N] [--port P] [--data DIR] [--heap 1g] [--version 2.19.6]

Defaults come from ``NODES``, ``OPENSEARCH_PORT`` (9200; node i serves HTTP on P+i and
transport on P+100+i), ``OPENSEARCH_DATA`` (``.opensearch/`` in the checkout),
``OPENSEARCH_HEAP`` and ``OPENSEARCH_VERSION``. Once the cluster is green it prints one
line, ``ready: URL[,URL...]``, for scripts to wait on.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from engine.cluster import DEFAULT_HEAP, DEFAULT_VERSION, EngineError, LocalCluster

CHECKOUT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    env = os.environ
    parser = argparse.ArgumentParser(prog="python -m engine", description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=int(env.get("NODES") or 1))
    parser.add_argument("--port", type=int, default=int(env.get("OPENSEARCH_PORT") or 9200))
    parser.add_argument("--data", type=Path,
                        default=Path(env.get("OPENSEARCH_DATA") or CHECKOUT / ".opensearch"))
    parser.add_argument("--heap", default=env.get("OPENSEARCH_HEAP") or DEFAULT_HEAP)
    parser.add_argument("--version", default=env.get("OPENSEARCH_VERSION") or DEFAULT_VERSION)
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(f"[opensearch] {message}", file=sys.stderr, flush=True)

    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    cluster = LocalCluster(nodes=args.nodes, port=args.port, data=args.data.resolve(),
                           heap=args.heap, version=args.version, log=log)
    try:
        cluster.launch()
        cluster.wait_ready()
    except EngineError as error:
        log(f"failed: {error}")
        cluster.stop()
        return 1
    print(f"ready: {cluster.url}", flush=True)
    log(f"{args.nodes} node(s) green; logs under {cluster.data}/node-*/logs; Ctrl+C stops them")
    while not stopping.wait(1.0):
        for node in cluster.members:
            if node.process is not None and node.process.poll() is not None:
                log(f"{node.name} exited ({node.process.returncode}); see {node.console}")
                stopping.set()
    log("stopping")
    cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
