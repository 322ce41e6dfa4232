"""Removed works: a profile that stops listing a work leaves its document.

The document stays while another profile lists the work and goes with the last
one; a page cut short never removes anything. Pure functions first, then the
writer against OpenSearch, then real crawls (in-process) over edited copies of the
fixture pages.
"""

from __future__ import annotations

import re
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from crawler.extract import parse_profile
from scholarindex.core.items import ResearcherItem, WorkItem
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import (
    Change,
    change_from_item,
    fold_change,
    unlist_change,
    unlist_changes,
)
from scholarindex.indexing.deadletter import DeadLetter
from scholarindex.indexing.documents import merge_listing, merge_researcher, unlist_listing
from standins.site import SiteServer
from tests.support.crawl import ROOT, CrawlResult, crawl_profiles

T1, T2, T3 = ("2026-01-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z",
              "2026-03-01T00:00:00.000Z")
SITE = ROOT / "fixtures" / "site"
CHAO, YINMIN = "/bzpeer/researchers/chao-jin/", "/bzpeer/researchers/yinmin-zhong/"
RELIBRA = "ReLibra: Routing-Replay-Guided Load Balancing for MoE Training in Reinforcement Learning"
PARITY = "Parity Declustering for Fault-Tolerant Storage Systems via $t$-designs"


def listing(researcher: str, work: str = "w", **fields: Any) -> dict[str, Any]:
    return asdict(WorkItem(work_id=work, title=f"Title of {work}", researcher_id=researcher,
                           researcher_name=researcher.title(), **fields))


def profile(researcher: str, work_ids: list[str] | None, complete: bool | None) -> dict[str, Any]:
    return asdict(ResearcherItem(id=researcher, url=f"https://x/{researcher}",
                                 name=researcher.title(), work_ids=work_ids, complete=complete))


# --- pure functions --------------------------------------------------------------------

def test_unlist_takes_one_profile_out_and_the_last_one_deletes() -> None:
    doc = merge_listing(merge_listing(None, listing("ann"), T1), listing("bob"), T1)
    without_ann = unlist_listing(doc, "ann", T2)
    assert without_ann is not None
    assert [p["id"] for p in without_ann["profiles"]] == ["bob"]
    assert without_ann["profile_count"] == 1 and "Ann" not in without_ann["authors"]
    assert len(doc["listings"]) == 2  # the input is not changed
    assert unlist_listing(without_ann, "ann", T2) == without_ann  # idempotent
    assert unlist_listing(without_ann, "bob", T2) is None  # no listing left: delete
    assert unlist_listing(None, "bob", T2) is None


def test_an_unlist_never_removes_a_listing_seen_after_it() -> None:
    """A late unlist (a replay, a slower crawl) loses to a newer listing, in either order."""
    relisted = merge_listing(None, listing("ann"), T3)
    unlist = unlist_change("w", "ann", T2)
    assert fold_change(relisted, unlist) == relisted
    older = merge_listing(None, listing("ann"), T1)
    assert fold_change(older, unlist) is None
    assert fold_change(fold_change(older, unlist), Change("work", "w", listing("ann"), T3)) \
        == relisted


def test_only_a_complete_page_not_older_than_the_index_removes() -> None:
    stored = merge_researcher(None, profile("ann", ["a", "b", "c"], True), T1)

    def removed(item: dict[str, Any], at: str = T2, still: set[str] | None = None) -> list[str]:
        change = Change("researcher", "ann", item, at)
        return [u.doc_id for u in unlist_changes(stored, change, still or set())]

    assert removed(profile("ann", ["a"], True)) == ["b", "c"]
    assert removed(profile("ann", ["a"], True), still={"c"}) == ["b"]  # the batch lists c
    assert removed(profile("ann", ["a"], False)) == []  # a cut page
    assert removed(profile("ann", None, None)) == []  # an item that does not say
    assert removed(profile("ann", ["a"], True), at="2025-12-01T00:00:00.000Z") == []  # older
    assert unlist_changes(None, Change("researcher", "ann", profile("ann", [], True), T2)) == []
    [unlist] = unlist_changes(stored, Change("researcher", "ann", profile("ann", ["a", "b"], True),
                                             T2))
    assert (unlist.kind, unlist.index, unlist.doc_id) == ("unlist", "works", "c")
    assert unlist.seen_at == T2
    assert Change.from_json(DeadLetter.from_line(  # survives the dead-letter file
        DeadLetter(unlist, "unavailable", "down", T2).to_line()).change.to_json()) == unlist


def test_a_cut_page_keeps_every_work_known_listed() -> None:
    full = profile("ann", ["a", "b", "c"], True)
    cut = profile("ann", ["a", "d"], False)
    doc = merge_researcher(merge_researcher(None, full, T1), cut, T2)
    assert doc["work_ids"] == ["a", "d", "b", "c"] and doc["complete"] is False
    assert merge_researcher(merge_researcher(None, cut, T2), full, T1) == doc  # any order
    # The next complete page is the whole truth again.
    again = merge_researcher(doc, profile("ann", ["a"], True), T3)
    assert again["work_ids"] == ["a"] and again["complete"] is True


def page(path: str, body: str) -> Any:
    return parse_profile(f"http://127.0.0.1{path}", body.encode(), "text/html", date(2026, 11, 22))


def test_a_page_is_complete_only_when_it_shows_its_whole_announced_list() -> None:
    chao = (SITE / CHAO.strip("/") / "index.html").read_text()
    yinmin = (SITE / YINMIN.strip("/") / "index.html").read_text()
    full = page(CHAO, chao).researcher
    assert full.complete is True and len(full.work_ids) == 5
    cut = page(CHAO, drop_listings(chao, [RELIBRA], fix_count=False)).researcher
    assert cut.complete is False and len(cut.work_ids) == 4
    empty = drop_listings(yinmin, [RELIBRA], fix_count=False)  # "1 published item(s)", none read
    assert page(YINMIN, empty).researcher.complete is False
    none_left = page(YINMIN, drop_listings(yinmin, [RELIBRA])).researcher
    assert (none_left.complete, none_left.work_ids) == (True, [])  # "0 published item(s)"
    uncounted = re.sub(r"<p>\d+ published item\(s\)</p>\n", "", chao)
    assert page(CHAO, uncounted).researcher.complete is False  # nothing to check against


# --- the writer against OpenSearch -----------------------------------------------------

def docs(client: OpenSearch, alias: str) -> dict[str, dict[str, Any]]:
    client.indices.refresh(index=alias)
    hits = client.search(index=alias, body={"size": 1000})["hits"]["hits"]
    return {hit["_id"]: hit["_source"] for hit in hits}


def changes(*items: tuple[dict[str, Any], str]) -> list[Change]:
    return [change_from_item(item, at) for item, at in items]


def test_writer_unlists_deletes_and_counts_once(make_writer: Callable[..., BulkWriter],
                                               opensearch_client: OpenSearch,
                                               index_prefix: str) -> None:
    writer = make_writer()
    first = writer.write(changes(
        (profile("ann", ["w1", "w2"], True), T1), (listing("ann", "w1"), T1),
        (listing("ann", "w2"), T1), (profile("bob", ["w1"], True), T1), (listing("bob", "w1"), T1)))
    assert (first.unlisted, first.docs_deleted, first.dead_lettered) == (0, 0, 0)
    dropped = changes((profile("ann", [], True), T2))
    report = writer.write(dropped)
    stats = report.stats()
    assert (stats["index/unlisted"], stats["index/docs_deleted"]) == (2, 1)
    works = docs(opensearch_client, f"{index_prefix}works")
    assert list(works) == ["w1"] and [p["id"] for p in works["w1"]["profiles"]] == ["bob"]
    researchers = docs(opensearch_client, f"{index_prefix}researchers")
    assert researchers["ann"]["work_ids"] == [] and researchers["ann"]["complete"] is True
    again = writer.write(dropped)  # the same page again: nothing left to remove
    assert (again.unlisted, again.docs_deleted, again.dead_lettered) == (0, 0, 0)
    assert docs(opensearch_client, f"{index_prefix}works") == works


def test_unlists_race_with_new_listings_and_lose_nothing(make_writer: Callable[..., BulkWriter],
                                                         opensearch_client: OpenSearch,
                                                         index_prefix: str) -> None:
    """One writer drops a profile from 30 works while another adds listings to them.

    Conflicts are re-read and re-merged: the dropped profile is gone from every
    work, and every listing the other writer added is there (a work deleted with
    its last listing is created again by the next one).
    """
    work_ids = [f"w{n:02d}" for n in range(30)]
    setup = make_writer()
    setup.write(changes((profile("ann", work_ids, True), T1),
                        *((listing("ann", w), T1) for w in work_ids)))
    adders = [f"p{n}" for n in range(4)]
    errors: list[BaseException] = []

    def add(writer: BulkWriter) -> None:
        try:
            for who in adders:
                writer.write(changes(*((listing(who, w), T2) for w in work_ids)))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    thread = threading.Thread(target=add, args=(make_writer(),))
    thread.start()
    dropper = make_writer().write(changes((profile("ann", [], True), T2)))
    thread.join(60)
    assert not errors and not thread.is_alive()
    assert dropper.dead_lettered == 0 and dropper.unlists_delivered == 30
    works = docs(opensearch_client, f"{index_prefix}works")
    assert sorted(works) == work_ids
    for doc in works.values():
        assert sorted(p["id"] for p in doc["profiles"]) == adders


class RacingClient:
    """The real client, except that right after its next read of works another writer's
    batch lands: what this writer read is stale by the time it writes."""

    def __init__(self, client: OpenSearch, race: Callable[[], object]) -> None:
        self._client = client
        self._race: list[Callable[[], object]] = [race]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def mget(self, *args: Any, **kwargs: Any) -> Any:
        found = self._client.mget(*args, **kwargs)
        if self._race and any(d["_index"].endswith("works") for d in kwargs["body"]["docs"]):
            self._race.pop()()
        return found


def test_an_unlist_that_lost_a_race_re_reads_and_keeps_the_newcomer(
        make_writer: Callable[..., BulkWriter], opensearch_client: OpenSearch,
        index_prefix: str) -> None:
    """Ann was the only profile; between the unlisting writer's read and its delete, Bob's
    listing lands. The delete conflicts (if_seq_no), and the re-merge keeps Bob's work."""
    work_ids = [f"w{n:02d}" for n in range(10)]
    make_writer().write(changes((profile("ann", work_ids, True), T1),
                                *((listing("ann", w), T1) for w in work_ids)))
    other = make_writer()
    unlisting = make_writer()
    unlisting.client = RacingClient(unlisting.client, lambda: other.write(
        changes(*((listing("bob", w), T2) for w in work_ids))))  # type: ignore[assignment]
    report = unlisting.write(changes((profile("ann", [], True), T2)))
    assert report.conflicts == len(work_ids) and report.dead_lettered == 0
    assert (report.unlisted, report.docs_deleted) == (len(work_ids), 0)
    works = docs(opensearch_client, f"{index_prefix}works")
    assert sorted(works) == work_ids
    assert all([p["id"] for p in doc["profiles"]] == ["bob"] for doc in works.values())


# --- real crawls -----------------------------------------------------------------------

def drop_listings(html: str, titles: list[str], fix_count: bool = True) -> str:
    """The page without the listing blocks (meta line, title, abstract) of ``titles``."""
    lines = html.split("\n")
    dropped = 0
    for title in titles:
        head = title.split(":")[0].split(" ")[0]
        [at] = [n for n, line in enumerate(lines)
                if line.startswith("<h3>") and re.sub(r"<[^>]+>", "", line).startswith(head)]
        assert lines[at - 1].startswith("<div><span>") and lines[at + 1].startswith("<p>")
        del lines[at - 1:at + 2]
        dropped += 1
    text = "\n".join(lines)
    if fix_count:
        count = re.search(r"<p>(\d+) published item\(s\)</p>", text)
        assert count
        text = text.replace(count.group(0), f"<p>{int(count[1]) - dropped} published item(s)</p>")
    return text


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[SiteServer, Path]]:
    """A copy of the two ReLibra profiles, served while a test edits them."""
    root = tmp_path / "site"
    for path in (CHAO, YINMIN):
        shutil.copytree(SITE / path.strip("/"), root / path.strip("/"))
    with SiteServer(root) as server:
        yield server, root


def edit(root: Path, path: str, titles: list[str], fix_count: bool = True) -> None:
    page_file = root / path.strip("/") / "index.html"
    page_file.write_text(drop_listings(page_file.read_text(), titles, fix_count))


def crawl(tmp_path: Path, server: SiteServer, paths: list[str], url: str,
          prefix: str) -> CrawlResult:
    urls = ",".join(server.url(p) for p in paths)
    result = crawl_profiles(tmp_path, {
        "INDEX_ENABLED": "true", "OPENSEARCH_URL": url, "INDEX_PREFIX": prefix,
        "INCREMENTAL_ENABLED": "false"}, urls=urls)
    assert result.returncode == 0, result.log[-3000:]
    return result


def by_title(works: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {doc["title"]: doc for doc in works.values()}


def test_a_dropped_work_leaves_with_its_last_profile(site, tmp_path, opensearch_url,
                                                     index_prefix, opensearch_client) -> None:
    server, root = site
    alias = f"{index_prefix}works"
    crawl(tmp_path, server, [CHAO, YINMIN], opensearch_url, index_prefix)
    before = by_title(docs(opensearch_client, alias))
    assert len(before) == 5
    assert sorted(p["name"] for p in before[RELIBRA]["profiles"]) == ["Chao Jin", "Yinmin Zhong"]

    # Chao Jin's page drops ReLibra and Parity Declustering; only his page is crawled.
    edit(root, CHAO, [RELIBRA, PARITY])
    run = crawl(tmp_path, server, [CHAO], opensearch_url, index_prefix)
    assert (run.stats["index/unlisted"], run.stats["index/docs_deleted"]) == (2, 1)
    after = by_title(docs(opensearch_client, alias))
    assert sorted(after) == sorted(set(before) - {PARITY})
    relibra = after[RELIBRA]
    assert [p["name"] for p in relibra["profiles"]] == ["Yinmin Zhong"]
    assert [e["researcher_name"] for e in relibra["listings"]] == ["Yinmin Zhong"]
    assert "Chao Jin" not in relibra["authors"] and relibra["profile_count"] == 1
    for title in set(after) - {RELIBRA}:  # his three other works keep him
        assert [p["name"] for p in after[title]["profiles"]] == ["Chao Jin"]

    # The same page again removes nothing more.
    again = crawl(tmp_path, server, [CHAO], opensearch_url, index_prefix)
    assert (again.stats["index/unlisted"], again.stats["index/docs_deleted"]) == (0, 0)
    assert sorted(by_title(docs(opensearch_client, alias))) == sorted(after)

    # Yinmin Zhong drops ReLibra too ("0 published item(s)"): nobody lists it any more.
    edit(root, YINMIN, [RELIBRA])
    run = crawl(tmp_path, server, [YINMIN], opensearch_url, index_prefix)
    assert (run.stats["index/unlisted"], run.stats["index/docs_deleted"]) == (1, 1)
    final = by_title(docs(opensearch_client, alias))
    assert sorted(final) == sorted(set(after) - {RELIBRA})
    researchers = docs(opensearch_client, f"{index_prefix}researchers")
    assert {r["name"]: (len(r["work_ids"]), r["complete"]) for r in researchers.values()} == {
        "Chao Jin": (3, True), "Yinmin Zhong": (0, True)}


def test_a_truncated_page_never_removes_anything(site, tmp_path, opensearch_url, index_prefix,
                                                 opensearch_client) -> None:
    server, root = site
    alias = f"{index_prefix}works"
    crawl(tmp_path, server, [CHAO, YINMIN], opensearch_url, index_prefix)
    before = docs(opensearch_client, alias)
    # Both pages still announce their counts but show fewer listings (cut short).
    edit(root, CHAO, [RELIBRA, PARITY], fix_count=False)
    edit(root, YINMIN, [RELIBRA], fix_count=False)
    run = crawl(tmp_path, server, [CHAO, YINMIN], opensearch_url, index_prefix)
    assert run.stats.get("profiles/truncated") == 2
    assert (run.stats["index/unlisted"], run.stats["index/docs_deleted"]) == (0, 0)
    after = docs(opensearch_client, alias)
    assert sorted(after) == sorted(before)
    for work_id, doc in after.items():
        assert doc["profiles"] == before[work_id]["profiles"]
    # The profiles still name every work they were seen listing.
    researchers = docs(opensearch_client, f"{index_prefix}researchers")
    assert {r["name"]: (len(r["work_ids"]), r["complete"]) for r in researchers.values()} == {
        "Chao Jin": (5, False), "Yinmin Zhong": (1, False)}
