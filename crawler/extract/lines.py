"""A page's visible text as lines, whatever markup renders it.

The sites' markup is unknown and changes; their text does not. So parsing starts
from what a browser shows: block elements and table cells start new lines,
inline elements run together, and scripts, styles, navigation, hidden elements
and page chrome are dropped. Plain-text pages are taken line by line.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import chain

from bs4.dammit import UnicodeDammit
from lxml import etree

# Elements that start and end a line when rendered.
BLOCK_TAGS = frozenset(
    "address article aside blockquote body caption center dd details dialog div dl dt "
    "fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr html legend "
    "li main menu ol p pre section summary table tbody td tfoot th thead tr ul option".split()
)
# Elements whose text a reader never sees as page content.
SKIP_TAGS = frozenset(
    "script style noscript template head svg iframe object canvas nav select datalist".split()
)
# Every tag the text layout treats apart from the rest.
_KNOWN_TAGS = BLOCK_TAGS | SKIP_TAGS | {"br", "footer", "a", "h1"}
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_HTML_SNIFF = re.compile(rb"<(?:!doctype|html|head|body|div|p|span|table|h[1-6]|section)\b", re.I)
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.I)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
# lxml.etree's parser, not lxml.html's: its element classes cost a lookup per node.
_PARSER = etree.HTMLParser(recover=True, huge_tree=True, remove_comments=True)


@dataclass
class PageText:
    """What parsers read from a page."""

    lines: list[str]
    links: list[tuple[str, str]] = field(default_factory=list)  # (href, link text)
    headings: list[str] = field(default_factory=list)  # <h1> texts: where a name usually is
    jsonld: list[dict] = field(default_factory=list)
    meta: dict[str, list[str]] = field(default_factory=dict)  # citation_* and friends
    encoding: str = "utf-8"
    encoding_problem: str | None = None


def decode(body: bytes, content_type: str | None = None) -> tuple[str, str, str | None]:
    """Decode a page body; returns (text, encoding used, problem or None).

    Valid UTF-8 wins over a declared legacy charset: bytes that decode as UTF-8 are
    almost never anything else, while a wrong ``charset=`` declaration is common.
    """
    for bom, name in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                      (codecs.BOM_UTF16_BE, "utf-16")):
        if body.startswith(bom):
            return body.decode(name, errors="replace"), name, None
    declared = _declared_charset(body, content_type)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        problem = None
        legacy = declared and _normal(declared) not in ("utf8", "ascii", "usascii")
        if legacy and not body.isascii():
            problem = f"declared {declared} but the bytes are UTF-8"
        return text, "utf-8", problem
    if declared:
        try:
            return body.decode(declared), declared, None
        except (LookupError, UnicodeDecodeError):
            pass
    dammit = UnicodeDammit(body, ["utf-8", "windows-1252"])
    if dammit.unicode_markup is not None:
        problem = None if declared else f"no charset declared; guessed {dammit.original_encoding}"
        return dammit.unicode_markup, dammit.original_encoding or "unknown", problem
    return body.decode("windows-1252", errors="replace"), "windows-1252", "undecodable bytes"


def _normal(charset: str) -> str:
    return re.sub(r"[^a-z0-9]", "", charset.lower())


def _declared_charset(body: bytes, content_type: str | None) -> str | None:
    if content_type and (m := _CHARSET.search(content_type)):
        return m.group(1)
    head = body[:4096].decode("ascii", errors="ignore")
    m = _CHARSET.search(head)
    return m.group(1) if m else None


def looks_like_html(body: bytes | str, content_type: str | None = None) -> bool:
    """Tell HTML from plain text, trusting an explicit Content-Type first."""
    ctype = (content_type or "").split(";")[0].strip().lower()
    if ctype in ("text/html", "application/xhtml+xml"):
        return True
    if ctype == "text/plain":
        return False
    head = body[:4096] if isinstance(body, bytes) else body[:4096].encode("utf-8", "ignore")
    return bool(_HTML_SNIFF.search(head))


def page_text(body: bytes | str, content_type: str | None = None) -> PageText:
    """The visible lines, links and structured data of an HTML or plain-text page."""
    encoding, problem = "utf-8", None
    if isinstance(body, bytes):
        body, encoding, problem = decode(body, content_type)
    body = body.replace("\x00", "")
    page = PageText([], encoding=encoding, encoding_problem=problem)
    if not looks_like_html(body, content_type):
        page.lines = [line for line in map(_clean, body.splitlines()) if line]
        return page
    root = _html_tree(body)
    if root is not None:
        _structured_data(root, page)
        _walk(root, page, body)
    return page


def _html_tree(body: str) -> etree._Element | None:
    """lxml's tree: several times faster to build and walk than BeautifulSoup's."""
    body = _XML_DECLARATION.sub("", body, count=1)  # lxml refuses str with an encoding declaration
    try:
        root = etree.fromstring(body, parser=_PARSER)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None
    if root is not None and "\u212a" in body:
        _lower_tags(root)
    return root


def _lower_tags(root: etree._Element) -> None:
    """Give a tag the name str.lower reads in it where libxml2 (ASCII only) did not.

    Only the Kelvin sign lowers to an ASCII letter ("k"): <bloc\u212aquote> is a
    blockquote. The stylesheet matches names exactly, hence this rare pass.
    """
    for element in root.iter():
        tag = element.tag
        if isinstance(tag, str) and not tag.isascii() and tag.lower() in _KNOWN_TAGS:
            element.tag = tag.lower()


def _clean(text: str) -> str:
    """Any run of whitespace, no-break spaces too, as one space; none at either end."""
    if "  " in text or text[:1] == " " or text[-1:] == " " or _odd_spacing(text):
        return " ".join(text.split())
    return text  # its only whitespace is single spaces: no need to split it into words


# The ASCII whitespace other than the space.
_ASCII_SPACING = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"


def _odd_spacing(text: str) -> bool:
    """Does the text hold whitespace other than spaces?"""
    if text.isascii():  # deleting bytes is cheaper than isprintable's per-character lookup
        raw = text.encode("ascii")
        return len(raw.translate(None, _ASCII_SPACING)) != len(raw)
    return not text.isprintable()  # all whitespace but the space is unprintable


def _text_of(element: etree._Element) -> str:
    return _clean(etree.tostring(element, method="text", encoding=str, with_tail=False))


def _skipped(element: etree._Element, tag: str) -> bool:
    if tag in SKIP_TAGS:
        return True
    if tag == "footer":  # page chrome, unless it closes an article or card
        return next(element.iterancestors("article", "li"), None) is None
    get = element.get
    if get("hidden") is not None or get("role") == "navigation":
        return True
    style = get("style")
    return bool(style and _HIDDEN_STYLE.search(style))


def _walk(root: etree._Element, page: PageText, source: str) -> None:
    """The visible lines, links and headings, as a browser shows them.

    libxslt lays the text out (``_LINES``): a Python loop over every node cost
    more than the rest of parsing. Python only decides which elements carrying
    ``hidden``, ``role`` or ``style``, and which footers, are chrome, and empties
    them first (their tails stay: text after a hidden element shows). ``source``: the
    markup the tree was parsed from, where the line-break marker is chosen.
    """
    owners = {attribute.getparent() for attribute in _SKIP_ATTRIBUTES(root)}
    hidden = {e for e in chain(owners, root.iter("footer")) if _skipped(e, e.tag.lower())}
    _links_and_headings(root, hidden, page)
    for element in hidden:
        element.clear(keep_tail=True)
        element.tag = "skipped"  # no longer a block: its edges break no line
    marker = _marker(source)
    text = str(_LINES(root.getroottree(), marker=etree.XSLT.strparam(marker)))
    pieces = (text + (root.tail or "")).split(marker)
    page.lines = [_clean(piece) for piece in pieces if piece and not piece.isspace()]


_SKIP_ATTRIBUTES = etree.XPath("//@*[name()='hidden' or name()='role' or name()='style']")
# Tags whose content never shows, whatever their attributes (a <br> has none to show).
_UNSHOWN_TAGS = SKIP_TAGS | {"br"}


def _links_and_headings(root: etree._Element, hidden: set[etree._Element],
                        page: PageText) -> None:
    """Links and <h1> texts outside chrome; ``hidden``: the other elements ``_skipped`` drops."""
    for element in root.iter("a", "h1"):
        if any(node in hidden or node.tag.lower() in _UNSHOWN_TAGS
               for node in chain((element,), element.iterancestors())):
            continue
        if element.tag == "h1":
            page.headings.append(_text_of(element))
        elif href := element.get("href"):
            page.links.append((href, _text_of(element)))


# A numeric character reference: how markup can hold a character without printing it.
# Digits past a code point's (after leading zeros) name none: not read, nor made an int.
_CHARACTER_REFERENCE = re.compile(
    r"&#(?:[xX]0*([0-9a-fA-F]{1,8})(?![0-9a-fA-F])|0*([0-9]{1,8})(?![0-9]))")


def _marker(source: str) -> str:
    """A character the page's text lacks, to stand for a line break.

    Chosen from the markup: text holds only characters the markup holds as themselves
    or as numeric references (no named one stands for a private-use character).
    Cheaper than serialising the tree's text to look: a private-use character is
    almost never in the markup, and one character is found in a str much faster
    than a longer string.
    """
    referenced: set[int] | None = None
    for code in chain(range(0xE000, 0xF900), range(0xF0000, 0x110000)):
        if chr(code) in source:
            continue
        if referenced is None:
            referenced = ({int(hexa, 16) if hexa else int(decimal) for hexa, decimal
                           in _CHARACTER_REFERENCE.findall(source)}
                          if "&" in source else set())
        if code not in referenced:
            return chr(code)
    raise ValueError("no private-use character left to mark line breaks")


def _lines_stylesheet() -> etree.XSLT:
    """The text of the root element with ``$marker`` at every block edge and <br>.

    Templates that match by name alone cost libxslt next to nothing, so skipped
    tags are dropped here; elements hidden by their attributes were emptied
    before (see ``_walk``).
    """
    mark = '<xsl:value-of select="$marker"/>'
    return etree.XSLT(etree.XML(f"""\
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text" encoding="UTF-8"/>
  <xsl:param name="marker"/>
  <xsl:template match="/"><xsl:apply-templates select="*[1]"/></xsl:template>
  <xsl:template match="{"|".join(sorted(SKIP_TAGS))}" priority="2"/>
  <xsl:template match="br" priority="1">{mark}</xsl:template>
  <xsl:template match="{"|".join(sorted(BLOCK_TAGS))}" priority="1">
    {mark}<xsl:apply-templates/>{mark}
  </xsl:template>
</xsl:stylesheet>"""), access_control=etree.XSLTAccessControl.DENY_ALL)


_LINES = _lines_stylesheet()


def _structured_data(root: etree._Element, page: PageText) -> None:
    for script in root.iter("script"):
        if (script.get("type") or "").lower() != "application/ld+json":
            continue
        try:
            data = json.loads(script.text or "")
        except ValueError:
            continue
        nodes = data if isinstance(data, list) else [data]
        for node in nodes:
            if not isinstance(node, dict):
                continue
            graph = node.get("@graph")
            members = graph if isinstance(graph, list) else [node]
            page.jsonld.extend(m for m in members if isinstance(m, dict))
    for meta in root.iter("meta"):
        name = meta.get("name") or meta.get("property")
        content = meta.get("content")
        if name and content is not None and name.startswith(("citation_", "og:", "profile:")):
            page.meta.setdefault(name, []).append(content.strip())


def match_across(
    lines: list[str], start: int, pattern: re.Pattern[str], max_lines: int,
    plausible: Callable[[str], bool] | None = None, pieces: tuple[str, ...] = (),
) -> tuple[re.Match[str] | None, int]:
    """Match ``pattern`` against lines[start:start+n] run together, longest n first.

    Text that one markup prints as ``preprint2026arXiv`` another prints as three
    lines; running them back together makes both read the same.
    ``plausible``, when given, is a cheap test that every text the pattern matches
    passes; texts that fail it are not matched. ``pieces``, when given, names the
    groups a markup may put in elements of their own: a match over several lines
    must then have one such piece a line, so a line that is not one (an abstract
    ``LG`` or ``72`` before the meta line ``LGMay 22, 2021``) is not run into the next.
    Returns the match and how many lines it used (0 when none matched).
    """
    for count in range(min(max_lines, len(lines) - start), 0, -1):
        text = "".join(lines[start:start + count])
        if plausible and not plausible(text):
            continue
        match = pattern.fullmatch(text)
        if match and (count == 1 or not pieces
                      or _one_piece_a_line(match, pieces, lines[start:start + count])):
            return match, count
    return None, 0


def _one_piece_a_line(match: re.Match[str], pieces: tuple[str, ...], lines: list[str]) -> bool:
    piece_starts = sorted(match.start(name) for name in pieces if match.group(name))
    line_starts, offset = [], 0
    for line in lines:
        line_starts.append(offset)
        offset += len(line)
    return piece_starts == line_starts


MetaFinder = Callable[[list[str], int], tuple[re.Match[str] | None, int]]


def find_listings(
    lines: list[str], meta_at: MetaFinder
) -> Iterator[tuple[int, re.Match[str], int, int]]:
    """Each listing of a works section: (meta line start, its match, body start, body end).

    Both layouts start each listing with a meta line; whatever follows it, up to
    the next one, is that listing's body: its title and text (``lines[start:end]``,
    empty when two meta lines follow each other).
    """
    def at(i: int) -> tuple[re.Match[str] | None, int]:
        return meta_at(lines, i) if i < len(lines) else (None, 0)

    # Each line is asked once: the line that ends a listing starts the next one.
    i = 0
    meta, used = at(0)
    while i < len(lines):
        if not meta:
            i += 1
            meta, used = at(i)
            continue
        start = i
        i += used
        begin = i
        following, following_used = at(i)
        while i < len(lines) and not following:
            i += 1
            following, following_used = at(i)
        yield start, meta, begin, i
        meta, used = following, following_used

