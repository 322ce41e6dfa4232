"""Searches run while a crawl writes never show one paper twice.

The bench site's generator lists about 30% of its works on several profiles; here the
second printing of each also carries a typo (two letters swapped in a long word), so it
arrives under another work_id and only resolution can tell it is the same paper. A real
crawl (a subprocess, over HTTP from a local server, with a real node) writes them while
this test searches through the product's query (``search.query.search_body``) and maps
every hit's listings back to the generator's works: no work may be in two hits, during
the crawl or after its pass.
"""

from __future__ import annotations

import functools
import random
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from bench.generate import build_site, write_site
from scholarindex.core.identity import title_key
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.indices import alias_name
from scholarindex.search.params import SearchRequest
from scholarindex.search.query import search_body
from tests.support.crawl import ROOT, crawl_command, process_result

PROFILES = 40


def _typo(title: str, rnd: random.Random) -> str:
    """Two inner letters of the title's longest plain word swapped (a typo resolution
    reads as one: not in a hyphenated compound, whose halves it weighs as words)."""
    word = max((w for w in title.split() if w.isalpha()), key=len, default="")
    if len(word) < 7:
        return title
    at = rnd.randrange(2, len(word) - 3)
    typo = word[:at] + word[at + 1] + word[at] + word[at + 2:]
    return title.replace(word, typo, 1)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[str, dict[tuple[str, str], int], list[str]]]:
    """The site served over HTTP: its URL list, (profile name, title key) -> the work, and
    the words to search for (one of each printed-twice work's other words)."""
    built = build_site(PROFILES, seed=3)
    rnd = random.Random(3)
    for person in built.profiles:
        for entry in person.listings:
            work = built.works[entry.work]
            if len(work.owners) > 1 and person.index == work.owners[1]:
                entry.title = _typo(entry.title, rnd)
    truth = {(person.name, title_key(entry.title)): entry.work
             for person in built.profiles for entry in person.listings}
    words = sorted({w for work in built.works if len(work.owners) > 1
                    for w in work.title.split()[:2] if len(w) > 4})
    root = tmp_path / "site"
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    write_site(built, root, base)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield (root / "urls.txt").read_text().replace("\n", ",").strip(","), truth, words
    finally:
        server.shutdown()
        server.server_close()


def _twice(client: OpenSearch, prefix: str, words: list[str],
           truth: dict[tuple[str, str], int]) -> list[tuple[str, int]]:
    """Each search's works shown in two hits or more."""
    seen = []
    for word in words:
        body = search_body(SearchRequest(q=word))
        body["size"] = 500  # past the API's page: every hit of the word
        body["_source"] = ["work_id", "listings.title", "listings.researcher_name"]
        body.pop("aggs", None)
        hits = client.search(index=alias_name(prefix, "works"), body=body,
                             request_timeout=30)["hits"]["hits"]
        shown: dict[int, int] = {}
        for hit in hits:
            works = {truth.get((e.get("researcher_name"), title_key(e.get("title") or "")))
                     for e in hit["_source"].get("listings") or ()}
            for work in works:
                if work is not None:
                    shown[work] = shown.get(work, 0) + 1
        seen += [(word, work) for work, hits_of in shown.items() if hits_of > 1]
    return seen


def test_no_paper_is_shown_twice_during_a_crawl_or_after(
        tmp_path: Path, site: tuple[str, dict[tuple[str, str], int], list[str]],
        opensearch_client: OpenSearch, opensearch_config: OpenSearchConfig) -> None:
    urls, truth, words = site
    prefix = opensearch_config.prefix
    command, out, report = crawl_command(tmp_path, "-a", f"urls={urls}", settings={
        "INDEX_ENABLED": "true", "OPENSEARCH_URL": opensearch_config.url,
        "INDEX_PREFIX": prefix, "DOWNLOAD_DELAY": "0.2", "CONCURRENT_REQUESTS": "1",
        "AUTOTHROTTLE_ENABLED": "false", "INDEX_FLUSH_INTERVAL": "0.3",
        "INDEX_BATCH_SIZE": "40", "ROBOTSTXT_OBEY": "false"})
    log = tmp_path / "crawl.log"
    with log.open("w") as err:
        crawl = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err,
                                 stdin=subprocess.DEVNULL)
    searches, twice = 0, []
    try:
        deadline = time.monotonic() + 600
        while crawl.poll() is None and time.monotonic() < deadline:
            if opensearch_client.indices.exists_alias(name=alias_name(prefix, "works")):
                twice += _twice(opensearch_client, prefix, words, truth)
                searches += len(words)
            time.sleep(0.2)
    finally:
        if crawl.poll() is None:
            crawl.kill()
        crawl.wait(timeout=60)
    result = process_result(crawl.returncode, out, report, log.read_text())
    assert result.returncode == 0, result.log[-3000:]
    assert searches > 0
    assert twice == [], f"shown twice during the crawl: {twice[:10]}"
    assert _twice(opensearch_client, prefix, words, truth) == []  # after the pass too
    # The printings with a typo were joined by the pass, and nothing is left hidden.
    assert result.report["resolution"]["mode"] == "full"  # a first crawl: all marked
    assert result.report["resolution"]["groups_changed"] > 0
    hidden = opensearch_client.count(index=alias_name(prefix, "works"),
                                     body={"query": {"exists": {"field": "hidden_by"}}})
    assert hidden["count"] == 0
