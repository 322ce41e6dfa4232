"""The fixtures are what the parser tests trust, so check them on their own.

Every page has an expected file with every key; every HTML rendering shows exactly
the text of its .txt (read with a small browser-like walker, independent of the
parsers); the renderings are up to date; the cross-page identity pairs follow the
work identity rule; the site, broken encodings and huge page are what they claim.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fixtures import render
from scholarindex.core.identity import title_key

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EXPECTED = FIXTURES / "expected"
PAGES = render.page_files()
STEMS = sorted(PAGES)

RESEARCHER_KEYS = {
    "name", "bio", "role", "affiliation", "trust_score", "trust_label", "verification_level",
    "claimed", "open_to_collaborate", "works_count", "followers", "topics_count",
    "collaborators_count", "field", "h_index", "papers_count", "citations", "novelty_pct",
    "ai_score", "listed_count",
}
A_ONLY = {"bio", "role", "affiliation", "trust_score", "trust_label", "verification_level",
          "claimed", "open_to_collaborate", "works_count", "followers", "topics_count",
          "collaborators_count"}
B_ONLY = {"field", "h_index", "papers_count", "citations", "novelty_pct", "ai_score"}
WORK_KEYS = {"title", "abstract", "type", "year", "date", "venue", "category", "score",
             "authors", "authors_truncated", "code"}
WORK_A_ONLY = {"type", "venue"}
WORK_B_ONLY = {"date", "category", "score", "authors", "authors_truncated", "code"}
TOP_KEYS = {"layout", "researcher", "works"}
OPTIONAL_TOP_KEYS = {"same_work_as", "not_same_work_as", "truncated"}


def expected(stem: str) -> dict:
    return json.loads((EXPECTED / f"{stem}.json").read_text(encoding="utf-8"))


def txt_lines(stem: str) -> list[str]:
    return [collapse(ln) for ln in PAGES[stem].read_text(encoding="utf-8").splitlines()
            if ln.strip()]


def collapse(text: str) -> str:
    return " ".join(text.split())


# --- A browser-like reader of visible text -----------------------------------------------------

SKIP_TAGS = {"head", "title", "script", "style", "template", "noscript", "nav", "footer", "svg"}
BLOCK_TAGS = {"html", "body", "main", "section", "article", "header", "div", "p", "h1", "h2", "h3",
              "h4", "h5", "h6", "ul", "ol", "li", "dl", "dt", "dd", "table", "thead", "tbody",
              "tr", "td", "th", "blockquote", "pre", "form", "br", "hr"}
INLINE_TAGS = {"span", "em", "strong", "a", "button", "b", "i"}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
             "track", "wbr"}


class VisibleText(HTMLParser):
    """Text chunks a browser shows: skips hidden subtrees, breaks at blocks and cells."""

    def __init__(self, inline_breaks: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        self.breaks = BLOCK_TAGS | (INLINE_TAGS if inline_breaks else set())
        self.chunks: list[str] = [""]
        self.stack: list[tuple[str, bool]] = []  # (tag, hidden) of open elements

    @property
    def hidden(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.breaks:
            self.chunks.append("")
        if tag in VOID_TAGS:
            return
        style = re.sub(r"\s+", "", dict(attrs).get("style") or "").lower()
        hides = tag in SKIP_TAGS or any(k == "hidden" for k, _ in attrs) or "display:none" in style
        self.stack.append((tag, self.hidden or hides))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.breaks:  # <br/>: a line break; <circle/> and the like: nothing
            self.chunks.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.breaks:
            self.chunks.append("")
        for i in range(len(self.stack) - 1, -1, -1):  # pop to the matching open tag
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.chunks[-1] += data


def visible_chunks(doc: str, inline_breaks: bool = False) -> list[str]:
    """Visible text chunks; with inline_breaks, every inline element is a chunk too."""
    reader = VisibleText(inline_breaks)
    reader.feed(doc)
    reader.close()
    return [c for c in (collapse(x) for x in reader.chunks) if c]


def assert_partition(lines: list[str], chunks: list[str]) -> None:
    """Each text line is the run-together text of consecutive chunks (cells, spans)."""
    pos = 0
    for line in lines:
        acc = ""
        while acc != line:
            assert pos < len(chunks), f"ran out of HTML text at line {line[:60]!r}"
            acc = chunks[pos] if not acc else acc + chunks[pos]
            pos += 1
            assert line.startswith(acc), f"line {line[:60]!r} does not continue with {acc[:60]!r}"
    assert pos == len(chunks), f"extra HTML text: {chunks[pos:][:3]}"


def html_doc(markup: str, stem: str) -> str:
    return (FIXTURES / "html" / markup / f"{stem}.html").read_text(encoding="utf-8")


# --- Pages and expected files ------------------------------------------------------------------


def test_every_page_has_an_expected_file_and_back() -> None:
    assert {p.stem for p in EXPECTED.glob("*.json")} == set(STEMS)
    assert len([s for s in STEMS if (FIXTURES / "seeds" / f"{s}.txt").exists()]) == 5


def test_seeds_hold_26_listings() -> None:
    seeds = [s for s in STEMS if (FIXTURES / "seeds" / f"{s}.txt").exists()]
    counts = {s: len(expected(s)["works"]) for s in seeds}
    assert counts == {"bzpeer_chao_jin": 5, "bzpeer_haibin_lin": 8, "bzpeer_yinmin_zhong": 1,
                      "bzpeer_jian_jiao": 9, "papercards_jialiang_cheng": 3}


@pytest.mark.parametrize("stem", STEMS)
def test_expected_file_has_every_key(stem: str) -> None:
    data = expected(stem)
    assert TOP_KEYS <= set(data) <= TOP_KEYS | OPTIONAL_TOP_KEYS
    layout = data["layout"]
    assert layout in ("bzpeer", "papercards", None)
    if layout is None:
        assert data["researcher"] is None and data["works"] == []
        return
    researcher = data["researcher"]
    assert set(researcher) == RESEARCHER_KEYS
    absent = B_ONLY if layout == "bzpeer" else A_ONLY
    assert all(researcher[k] is None for k in absent)
    present = RESEARCHER_KEYS - absent - {"affiliation"}  # affiliation may be not imported
    assert all(researcher[k] is not None for k in present), researcher
    for work in data["works"]:
        assert set(work) == WORK_KEYS
        absent_w = WORK_B_ONLY if layout == "bzpeer" else WORK_A_ONLY
        assert all(work[k] is None for k in absent_w), work["title"]
        assert isinstance(work["title"], str) and work["title"] == work["title"].strip()
        assert isinstance(work["year"], int)
        if layout == "papercards":
            assert work["date"][:4] == str(work["year"])
    listed = researcher["listed_count"]
    if data.get("truncated"):
        assert listed > len(data["works"])
    else:
        assert listed == len(data["works"])


@pytest.mark.parametrize("stem", [s for s in STEMS if not s.startswith("junk_")])
def test_expected_agrees_with_the_text(stem: str) -> None:
    """Hand-typed values against the page's own pieces, read independently of the parsers."""
    page = render.load_page(stem)
    data = expected(stem)
    assert page.layout == data["layout"]
    assert page.name == data["researcher"]["name"]
    listings = page.work_lines()[: len(data["works"])]
    for lines, work in zip(listings, data["works"], strict=True):
        by_kind = {ln.kind: ln for ln in lines}
        assert by_kind["title"].text == work["title"]
        assert (by_kind["abstract"].text if "abstract" in by_kind else None) == work["abstract"]
        meta = by_kind["meta"].pieces
        if page.layout == "bzpeer":
            assert meta == (work["type"], str(work["year"]), work["venue"])
            continue
        parts = render.b_meta_parts(meta)
        assert parts["category"] == work["category"]
        assert render.iso_date(parts["date"] or "") == work["date"]
        assert parts["score"] == (None if work["score"] is None else str(work["score"]))
        assert (parts["code"] == "Code") is work["code"]
        printed = ", ".join(work["authors"]) + (" et al." if work["authors_truncated"] else "")
        assert by_kind["authors"].text == printed
    if page.layout == "bzpeer":
        bar = next(ln for ln in page.lines if ln.kind == "bar").pieces
        affiliation = None if bar[-2] == "Affiliation not imported" else bar[-2]
        researcher = data["researcher"]
        assert (bar[0], affiliation) == (researcher["role"], researcher["affiliation"])


def _identity_refs() -> list[tuple[str, str, str, str, str]]:
    refs = []
    for stem in STEMS:
        for key in ("same_work_as", "not_same_work_as"):
            for title, others in expected(stem).get(key, {}).items():
                for other in others:
                    other_stem, other_title = other.split(":", 1)
                    refs.append((key, stem, title, other_stem, other_title))
    return refs


def test_identity_pairs_resolve_are_symmetric_and_follow_the_rule() -> None:
    refs = _identity_refs()
    assert len([r for r in refs if r[0] == "same_work_as"]) >= 2 * 6
    assert len([r for r in refs if r[0] == "not_same_work_as"]) >= 2 * 5
    titles = {(s, w["title"]) for s in STEMS for w in expected(s)["works"]}
    as_set = set(refs)
    for key, stem, title, other_stem, other_title in refs:
        assert (stem, title) in titles and (other_stem, other_title) in titles
        assert (key, other_stem, other_title, stem, title) in as_set
        same = title_key(title) == title_key(other_title)
        assert same is (key == "same_work_as"), (title, other_title)


def test_no_undeclared_title_collisions() -> None:
    """Two listings with one identity key must be declared the same work."""
    by_key: dict[str, list[tuple[str, str]]] = {}
    for stem in STEMS:
        for work in expected(stem)["works"]:
            by_key.setdefault(title_key(work["title"]), []).append((stem, work["title"]))
    declared = {(s, t, o) for k, s, t, os_, ot in _identity_refs() if k == "same_work_as"
                for o in [f"{os_}:{ot}"]}
    for listings in by_key.values():
        for stem, title in listings[1:]:
            first_stem, first_title = listings[0]
            assert (first_stem, first_title, f"{stem}:{title}") in declared


# --- HTML renderings ---------------------------------------------------------------------------


def test_every_markup_exists_for_every_page() -> None:
    for markup in render.MARKUPS:
        assert {p.stem for p in (FIXTURES / "html" / markup).glob("*.html")} == set(STEMS), markup


@pytest.mark.parametrize("markup", render.MARKUPS)
@pytest.mark.parametrize("stem", STEMS)
def test_rendering_is_up_to_date(stem: str, markup: str) -> None:
    text = PAGES[stem].read_text(encoding="utf-8")
    fresh = render.render(text, markup, stem)
    assert html_doc(markup, stem) == fresh, "stale: run python -m fixtures.render"


@pytest.mark.parametrize("markup", ["lines", "spans", "jsonld"])
@pytest.mark.parametrize("stem", STEMS)
def test_visible_text_is_the_page_text_line_for_line(stem: str, markup: str) -> None:
    assert visible_chunks(html_doc(markup, stem)) == txt_lines(stem)


@pytest.mark.parametrize("stem", STEMS)
def test_table_cells_run_together_into_the_page_text(stem: str) -> None:
    chunks = visible_chunks(html_doc("table", stem))
    assert_partition(txt_lines(stem), chunks)
    assert "".join(chunks) == "".join(txt_lines(stem))


@pytest.mark.parametrize("stem", STEMS)
def test_spans_really_split_run_together_lines(stem: str) -> None:
    """Each element of a run-together line is its own inline element, with no gap between."""
    doc = html_doc("spans", stem)
    inline = visible_chunks(doc, inline_breaks=True)
    page = render.load_page(stem)
    for ln in page.lines:
        if len(ln.pieces) > 1:
            n = len(ln.pieces)
            runs = [tuple(inline[i:i + n]) for i in range(len(inline) - n + 1)]
            assert tuple(collapse(p) for p in ln.pieces) in runs, ln.text
        if ln.kind == "title" and len(ln.text.split()) >= 3:
            assert collapse(ln.text) not in inline, "title not split into pieces"
    # Page chrome that must be ignored is really there.
    for needle in ("<nav>", "<footer>", "<div hidden>", 'style="display:none"', "<svg", "<title>"):
        assert needle in doc


def test_entities_appear_where_the_text_has_them() -> None:
    assert "&amp;" in html_doc("spans", "bzpeer_jose_luis_penalver")
    assert "&#8211;" in html_doc("spans", "bzpeer_mateus_oliveira_truncated")
    script_text = "&lt;script&gt;alert(1)&lt;/script&gt;"
    for markup in render.MARKUPS:
        doc = html_doc(markup, "bzpeer_kadri_tamm")
        assert script_text in doc and "<script>alert(1)" not in doc


@pytest.mark.parametrize("stem", STEMS)
def test_jsonld_is_consistent_with_the_text(stem: str) -> None:
    doc = html_doc("jsonld", stem)
    block = re.search(r'<script type="application/ld\+json">(.*?)</script>', doc, re.S)
    assert block is not None
    data = json.loads(block.group(1))
    exp = expected(stem)
    if exp["layout"] is None:
        assert data["@type"] == "WebPage"
        return
    nodes = data.get("@graph", [data])
    person = next(n.get("mainEntity", n) for n in nodes if n["@type"] in ("Person", "ProfilePage"))
    assert person["name"] == exp["researcher"]["name"]
    affiliation = (person.get("affiliation") or {}).get("name")
    assert affiliation == exp["researcher"]["affiliation"]
    articles = [n for n in nodes if n["@type"] == "ScholarlyArticle"]
    if exp["layout"] == "papercards":
        assert [(a["headline"], [p["name"] for p in a["author"]], a["datePublished"])
                for a in articles] == [(w["title"], w["authors"], w["date"]) for w in exp["works"]]


# --- Broken encodings and the huge page --------------------------------------------------------


def test_broken_encodings() -> None:
    broken = FIXTURES / "html" / "broken"
    manifest = json.loads((broken / "manifest.json").read_text())
    assert {m["file"] for m in manifest} == {p.name for p in broken.glob("*.html")}
    for entry in manifest:
        raw = (broken / entry["file"]).read_bytes()
        lines_doc = render.render_lines(render.load_page(entry["stem"]))
        if entry["case"] == "utf8_declared_windows1252":
            assert b'<meta charset="windows-1252">' in raw
            assert raw.decode("utf-8") == lines_doc.replace('charset="utf-8"',
                                                            'charset="windows-1252"')
            assert "Ã©" in raw.decode("cp1252", errors="replace")  # what a browser shows
        elif entry["case"] == "utf16le_bom":
            assert raw.startswith(b"\xff\xfe") and "charset" not in raw.decode("utf-16")
            assert raw.decode("utf-16") == lines_doc.replace('<meta charset="utf-8">\n', "")
        elif entry["case"] == "latin1_undeclared":
            assert b"charset" not in raw and b"\xe9" in raw
            with pytest.raises(UnicodeDecodeError):
                raw.decode("utf-8")
            assert raw.decode("latin-1") == lines_doc.replace('<meta charset="utf-8">\n', "")
        else:
            pytest.fail(f"unknown case {entry['case']}")


def test_huge_page_is_generated_past_the_download_limit() -> None:
    body = render.huge_page_html()
    assert len(body) > 9 * 1024 * 1024
    text = render.huge_page_text()
    found = re.search(r"(\d+) published item\(s\)", text)
    assert found is not None
    announced = int(found.group(1))
    assert announced == text.count("preprint2022arXiv") > 1000
    assert not any(p.stat().st_size > 1024 * 1024 for p in FIXTURES.rglob("*") if p.is_file())


# --- The static site ---------------------------------------------------------------------------


def test_site_files_are_up_to_date() -> None:
    pages = render.site_pages()
    site = FIXTURES / "site"
    on_disk = {"/" + p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    wanted = {path + ("index.html" if path.endswith("/") else "") for path in pages}
    assert on_disk == wanted
    for path, doc in pages.items():
        rel = path.lstrip("/") + ("index.html" if path.endswith("/") else "")
        assert (site / rel).read_text(encoding="utf-8") == doc, path
    sitemap = json.loads((site / "sitemap.json").read_text(encoding="utf-8"))
    assert sitemap == json.loads(json.dumps(render.site_map(pages)))


def test_site_profiles_show_their_text_plus_collaborators() -> None:
    site = FIXTURES / "site"
    for stem, path in render.SITE_PROFILES.items():
        doc = (site / (path.lstrip("/") + ("index.html" if path.endswith("/") else ""))).read_text()
        lines = txt_lines(stem)
        if stem in render.COLLABORATORS:
            names = [render.load_page(s).name for s in render.COLLABORATORS[stem]]
            at = lines.index("Published work")
            lines = [*lines[:at], "Close collaborators", *names, *lines[at:]]
        assert visible_chunks(doc) == lines, stem


def test_site_urls_robots_and_seeds() -> None:
    site = FIXTURES / "site"
    raw = (site / "urls.txt").read_text().splitlines()
    assert any(ln.startswith("#") for ln in raw) and "" in raw
    paths = [ln for ln in raw if ln and not ln.startswith("#")]
    assert paths == [render.SITE_PROFILES[s] for s in render.SEED_STEMS]
    for path in paths:
        assert (site / (path.lstrip("/") + ("index.html" if path.endswith("/") else ""))).is_file()
    robots = (site / "robots.txt").read_text()
    assert "Disallow: /private/" in robots and (site / "private" / "staff.html").is_file()
    index = (site / "index.html").read_text()
    listed = [p for p in render.SITE_PROFILES.values() if f'href="{p}"' in index]
    assert 0 < len(listed) < len(render.SITE_PROFILES)


def test_site_readme_reach_counts() -> None:
    """What site/README.md says a crawl from urls.txt reaches with DEPTH_LIMIT = 2."""
    sitemap = json.loads((FIXTURES / "site" / "sitemap.json").read_text(encoding="utf-8"))

    def reached(key: str) -> set[str]:
        return {p for p, i in sitemap.items() if i[key] is not None and i[key] <= 2}

    profiles = {p for p, i in sitemap.items() if i["profile"]}
    assert len(reached("depth_profile_links") & profiles) == 8
    assert len(reached("depth_all_links") & profiles) == 10
    assert "/bzpeer/researchers/amara-okonkwo/" not in reached("depth_all_links")
    assert "/private/staff.html" not in reached("depth_all_links")
