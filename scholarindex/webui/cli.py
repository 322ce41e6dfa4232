"""``scholarindex serve``: run the search UI and JSON API with uvicorn.

The web app reads no settings itself: the command that mounts ``serve`` gives it
the cluster's ``OpenSearchConfig`` (``scholarindex.ops.cli`` builds it from the project's settings).
"""

from __future__ import annotations

from collections.abc import Callable

import click

from scholarindex.indexing.connection import OpenSearchConfig


def serve_command(opensearch: Callable[[], OpenSearchConfig]) -> click.Command:
    """The ``serve`` command, connecting to the cluster ``opensearch()`` returns."""

    @click.command()
    @click.option("--host", default="127.0.0.1", show_default=True,
                  help="Address to listen on (0.0.0.0 to listen on every interface).")
    @click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
                  help="Port to listen on.")
    def serve(host: str, port: int) -> None:
        """Serve the search UI (/) and JSON API (/api/search, /docs) over the index aliases.

        Connects to OPENSEARCH_URL (with OPENSEARCH_USER, OPENSEARCH_PASSWORD,
        OPENSEARCH_VERIFY_CERTS, OPENSEARCH_CA_CERTS) and reads the aliases
        {INDEX_PREFIX}works and {INDEX_PREFIX}researchers. Read-only: it never
        writes to the index. If OpenSearch is down, pages answer 503 until it is back.
        """
        # Imported here so `scholarindex --help` and the other commands stay fast, and
        # work without the web extra.
        try:
            import uvicorn

            from scholarindex.webui.app import create_app
        except ModuleNotFoundError as exc:
            raise click.ClickException(
                f"the search UI needs the web extra ({exc.name} is not installed): "
                "pip install 'scholar-index[web]'") from exc

        config = opensearch()
        app = create_app(config)
        click.echo(f"Scholar Index search at http://{host}:{port}/ (OpenSearch "
                   f"{config.safe_url}, index prefix {config.prefix!r}); Ctrl+C stops it")
        uvicorn.run(app, host=host, port=port, log_level="info")

    return serve
