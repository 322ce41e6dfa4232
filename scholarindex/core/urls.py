"""URLs: lists of them as url files give them, and URLs fit for logs, reports and errors."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit


def redact_url(url: str) -> str:
    """The URL without ``user:password@``, so it can be logged."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))


def read_url_list(text: str) -> list[str]:
    """URLs from a url_file: one a line; blank lines and '#' comments ignored."""
    urls = []
    for line in text.splitlines():
        line = re.split(r"\s#", line, maxsplit=1)[0].strip()
        if line and not line.startswith("#"):
            urls.append(line)
    return urls
