"""``scholarindex``: the one command ops need to run the index."""

from __future__ import annotations

import click

from webui.cli import serve


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Operate the Scholar Index search index: status, re-index, rollback, replay,
    enrichment and the search UI. Reads OPENSEARCH_* and INDEX_PREFIX from the
    environment, like the crawler."""


# `serve` lives with the web app it runs (webui/cli.py).
main.add_command(serve)
