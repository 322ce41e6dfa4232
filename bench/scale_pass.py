"""One resolution pass for ``bench.scale``, in a process that imports nothing else.

    python -m bench.scale_pass [--full] [--dry-run [--plan FILE]]

On the cluster the environment names (``OPENSEARCH_URL``, ``INDEX_PREFIX``,
``INDEX_SHARDS``, ...), through the pass's public entry
(``scholarindex.indexing.resolution.ResolutionPass``); prints its report as one JSON
line. Its own process, started through ``bench.launch``, so the peak memory and CPU
measured are the pass's, not the harness's (which holds the generated site).

``--full``: the full pass (``run(full=True)``); without it, the incremental one.
``--dry-run``: plan without writing, so the same state can be passed over again (after
``python -m bench.scale --passes none --keep``, to profile a pass); ``--plan FILE``
writes the dry run's changes there as JSON, to compare two versions' plans.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import replace
from pathlib import Path

from crawler.environment import project_settings
from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.resolution import ResolutionPass

PASS_REQUEST_TIMEOUT = 120.0  # a scroll page of a large index on a loaded machine


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scale_pass")
    parser.add_argument("--full", action="store_true", help="the full pass")
    parser.add_argument("--dry-run", action="store_true", help="plan, write nothing")
    parser.add_argument("--plan", type=Path, default=None,
                        help="with --dry-run: write the planned changes to this JSON file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="[pass %(relativeCreated)6.0f ms] %(levelname)s %(name)s: "
                               "%(message)s")
    settings = project_settings()
    config = OpenSearchConfig.from_settings(settings)
    client = build_client(replace(config, timeout=max(config.timeout, PASS_REQUEST_TIMEOUT)))
    resolver = ResolutionPass(client, config.prefix, RetryPolicy.from_settings(settings, "INDEX"),
                              layout=config.layout)
    report = resolver.run(dry_run=args.dry_run, full=args.full)
    if args.plan:
        changes = sorted(report.changes, key=lambda change: change["documents"])
        args.plan.write_text(json.dumps(changes, indent=1) + "\n", "utf-8")
    print(json.dumps(report.as_dict()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
