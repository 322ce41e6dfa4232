"""One resolution pass for ``bench.scale``, in a process that imports nothing else.

    python -m bench.scale_pass [--full]

On the cluster the environment names (``OPENSEARCH_URL``, ``INDEX_PREFIX``,
``INDEX_SHARDS``, ...), through the pass's public entry
(``scholarindex.indexing.resolution.ResolutionPass``); prints its report as one JSON
line. Its own process, started through ``bench.launch``, so the peak memory and CPU
measured are the pass's, not the harness's (which holds the generated site).

``--full`` asks for the full pass where the pass has that switch (``run(full=True)``);
without it the pass runs in its default mode. ``has_full_switch`` says which.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from dataclasses import replace
from typing import Any

from crawler.environment import project_settings
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.resolution import ResolutionPass

PASS_REQUEST_TIMEOUT = 120.0  # a scroll page of a large index on a loaded machine


def has_full_switch() -> bool:
    """Does this version's pass take ``full`` (an incremental default beside it)?"""
    return "full" in inspect.signature(ResolutionPass.run).parameters


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scale_pass")
    parser.add_argument("--full", action="store_true", help="the full pass")
    args = parser.parse_args(argv)
    settings = project_settings()
    config = OpenSearchConfig.from_settings(settings)
    client = build_client(replace(config, timeout=max(config.timeout, PASS_REQUEST_TIMEOUT)))
    resolver = ResolutionPass(client, config.prefix, RetryPolicy.from_settings(settings, "INDEX"),
                              layout=config.layout)
    # Through a mapping: the switch exists only in versions with an incremental pass.
    switch: dict[str, Any] = {"full": True} if args.full and has_full_switch() else {}
    report = resolver.run(**switch)
    print(json.dumps(report.as_dict()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
