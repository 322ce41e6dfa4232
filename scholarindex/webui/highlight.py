"""Crawled text to safe HTML, with ``<mark>`` around what the query matched.

Crawled text is untrusted (an abstract may hold ``<script>``). OpenSearch marks
matches with two private-use characters instead of HTML tags; here the whole
fragment is escaped first and only then are the sentinels turned into
``<mark>``/``</mark>``. So the only markup in the output is ours, balanced,
whatever the page or the cluster sent. Nothing else in the app marks text safe.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from markupsafe import Markup, escape

from scholarindex.search.query import MARK_CLOSE, MARK_OPEN

_SENTINELS = re.compile(f"([{MARK_OPEN}{MARK_CLOSE}])")
SNIPPET_CHARS = 300
ELLIPSIS = "…"


def mark(fragment: str) -> Markup:
    """One highlighted fragment as HTML: escaped text, our ``<mark>`` tags, always balanced."""
    out: list[str] = []
    open_ = False
    for part in _SENTINELS.split(fragment):
        if part == MARK_OPEN:
            if not open_:
                out.append("<mark>")
                open_ = True
        elif part == MARK_CLOSE:
            if open_:
                out.append("</mark>")
                open_ = False
        else:
            out.append(str(escape(part)))
    if open_:
        out.append("</mark>")
    return Markup("".join(out))


def join_fragments(fragments: Iterable[str], whole: str | None = None) -> Markup:
    """Abstract fragments as one HTML snippet, with an ellipsis wherever text was left out.

    ``whole`` is the full abstract, to tell whether a fragment starts or ends it.
    """
    fragments = [f for f in fragments if f]
    if not fragments:
        return Markup("")
    html = Markup(f" {ELLIPSIS} ").join(mark(f) for f in fragments)
    if whole is not None:
        body = whole.strip()
        if not body.startswith(_SENTINELS.sub("", fragments[0]).strip()):
            html = Markup(f"{ELLIPSIS} ") + html
        if not body.endswith(_SENTINELS.sub("", fragments[-1]).strip()):
            html = html + Markup(f" {ELLIPSIS}")
    return html


def plain(text: str | None, limit: int | None = None) -> str:
    """Text with the sentinels removed, cut at a word boundary after ``limit`` characters.

    Returned as ``str``: the template's autoescape escapes it.
    """
    clean = _SENTINELS.sub("", text or "")
    if limit is None or len(clean) <= limit:
        return clean
    cut = clean[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(" ,.;:") + " " + ELLIPSIS
