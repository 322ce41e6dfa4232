"""The incremental resolution pass: only what changed, and the clusters of a full pass.

Random crawls (listings added, changed, unlisted, works gone entirely) are written to a
real node, each followed by an incremental pass; after the last one, a full pass finds
nothing to change: the incremental passes made its clusters. The incremental pass reads
what a crawl changed and its neighbours, not the index; it clears its marks, finds a
work's neighbours through the stored blocking keys, and leaves a work gone its keys on
its tombstone.
"""

from __future__ import annotations

import itertools
import random
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opensearchpy import OpenSearch

from scholarindex.core.resolution.blocking import (
    crossed,
    is_pair_key,
    pair_key,
    pair_key_words,
    word_key,
)
from scholarindex.core.resolution.similarity import same_word
from scholarindex.indexing import neighbourhood, resolution
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import change_from_item, unlist_change
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.deadletter import DeadLetterFile
from scholarindex.indexing.indices import TOMBSTONES_INDEX, alias_name, ensure_aliases
from scholarindex.indexing.resolution import ResolutionPass
from tests.support.examples import examples
from tests.support.index_contents import snapshot
from tests.support.works import PAPER, POLICY, listing

# Printings of a few papers that block together and partly match: one paper printed
# five ways, a different paper of the same words, a paper cut short, generic titles,
# papers sharing a word or two with them.
TITLES = [
    PAPER,
    "Efficient Procesing of Window Queries over Streaming Sensor Data",
    "Efficient Processing of Window Queries over Streaming Sensor",
    "Efficient processing of window queries over streaming sensor data.",
    "Window Queries over Streaming Sensor Data",
    "Efficient Processing of Range Queries over Spatial Sensor Networks",
    "Efficient Processing of Range Queries over Spatial Sensor",
    "Adaptive Load Shedding for Windowed Stream Joins",
    "Adaptive Load Shedding for Windowed Stream Joins in Sensor Networks",
    "Preface",
    # Holders of one or two of the words above, which blocking pairs with few of them.
    "Sensor Calibration for Mobile Robots",
    "Window Functions in Analytic Queries",
]
PEOPLE = ["Ann Lee", "Bob Stone", "Cid Moor", "Dan Ray"]
YEARS = [2018, 2019, 2020]
TIMES = [f"2026-0{m}-01T00:00:00.000Z" for m in range(1, 10)]


def _listing(title: int, person: int, year: int, authors: bool) -> dict[str, Any]:
    names = tuple(PEOPLE[:person + 1]) if authors else ()
    return listing(TITLES[title], PEOPLE[person], year=YEARS[year], authors=names)


_listings = st.builds(_listing, st.integers(0, len(TITLES) - 1),
                      st.integers(0, len(PEOPLE) - 1), st.integers(0, len(YEARS) - 1),
                      st.booleans())
# A crawl: listings written (new, or the same work_id printed with another year or
# authors), and indices into what is listed so far to unlist.
_crawls = st.lists(st.tuples(st.lists(_listings, max_size=6),
                             st.lists(st.integers(0, 40), max_size=3)),
                   min_size=1, max_size=4)


@pytest.fixture
def fresh(opensearch_config: OpenSearchConfig, opensearch_client: OpenSearch,
          tmp_path: Any) -> Iterator[Any]:
    """A writer and a pass on indices of their own, made anew for each example."""
    made: list[str] = []

    def make() -> tuple[BulkWriter, ResolutionPass, str]:
        prefix = f"{opensearch_config.prefix}{uuid.uuid4().hex[:8]}-"
        made.append(prefix)
        ensure_aliases(opensearch_client, prefix)
        writer = BulkWriter(opensearch_client, prefix,
                            DeadLetterFile(tmp_path / f"{prefix}dead.jsonl"), POLICY)
        return writer, ResolutionPass(opensearch_client, prefix, POLICY), prefix

    yield make
    for prefix in made:
        opensearch_client.indices.delete(index=f"{prefix}*", ignore=404)


def _crawl(writer: BulkWriter, listed: list[tuple[str, str]], items: list[dict[str, Any]],
           unlists: list[int], at: str) -> None:
    changes = [change_from_item(item, at) for item in items]
    for number in unlists:
        if listed:
            work_id, researcher = listed[number % len(listed)]
            changes.append(unlist_change(work_id, researcher, at))
    report = writer.write(changes)
    assert not report.fatal and not report.dead_lettered
    for item in items:
        if (item["work_id"], item["researcher_id"]) not in listed:
            listed.append((item["work_id"], item["researcher_id"]))


def _reprinted(writer: BulkWriter, resolver: ResolutionPass, indexed: list[dict[str, Any]],
               printings: list[dict[str, Any]]) -> resolution.ResolutionReport:
    """``indexed`` written and settled by a full pass, then ``printings`` written: the
    report of the incremental pass after them."""
    _crawl(writer, [], indexed, [], TIMES[0])
    resolver.run(full=True)
    _crawl(writer, [], printings, [], TIMES[1])
    return resolver.run(full=False)


def _groups(client: OpenSearch, prefix: str) -> list[list[str]]:
    docs = snapshot(client, alias_name(prefix, "works"))
    return sorted(sorted(d.get("work_ids") or [d["work_id"]]) for d in docs.values())


# Titles holding one word of the papers' each, beside words of their own: with them the
# counts of those words are too high for a crawl above to move their rarity, so the pass
# reads their holders only where blocking can pair them with the change.
CROWD = [listing(f"{word} Topic{k} Matter{k} Thing{k}", f"Person{k} Crowd")
         for word in ("Sensor", "Window", "Queries", "Streaming") for k in range(40)]


@settings(max_examples=examples(12), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(_crawls, st.booleans(), st.booleans())
def test_incremental_passes_after_random_crawls_equal_one_full_pass(
        fresh: Any, opensearch_client: OpenSearch,
        crawls: list[tuple[list[dict[str, Any]], list[int]]], crowd: bool,
        judged: bool) -> None:
    writer, resolver, prefix = fresh()
    writer.hide_unresolved = judged  # the writer's judgment marks a new work's match too
    listed: list[tuple[str, str]] = []
    if crowd:
        _crawl(writer, [], CROWD, [], TIMES[0])
        resolver.run(full=True)
    for at, (items, unlists) in zip(TIMES, crawls, strict=False):
        _crawl(writer, listed, items, unlists, at)
        report = resolver.run(full=False)
        assert report.mode == "incremental" and not report.conflicts
    incremental = _groups(opensearch_client, prefix)

    full = resolver.run(full=True, dry_run=True)

    assert full.changes == [], f"incremental left {incremental}; full pass: {full.changes}"
    marked = opensearch_client.count(index=alias_name(prefix, "works"),
                                     body={"query": {"exists": {"field": "resolve_pending"}}})
    assert marked["count"] == 0  # every mark settled


def test_a_pass_reads_the_change_and_its_neighbours_not_the_index(fresh: Any) -> None:
    writer, resolver, _prefix = fresh()
    unrelated = [listing(f"Distinct Topic Number {n} about Subject{n} and Matter{n}",
                         PEOPLE[n % 4], year=2019) for n in range(30)]
    _crawl(writer, [], [*unrelated, listing(PAPER, "Ann Lee")], [], TIMES[0])
    first = resolver.run(full=False)
    assert first.pending == 31  # a new index: everything is a change
    assert resolver.run(full=False).documents == 0  # nothing changed since

    _crawl(writer, [], [listing(TITLES[1], "Bob Stone", authors=("Ann Lee", "Bob Stone"))], [],
           TIMES[1])
    report = resolver.run(full=False)

    assert report.pending == 1
    assert report.documents == 2  # the new printing and the paper it joins; not the 30
    assert report.groups_changed == 1
    assert resolver.run(full=True, dry_run=True).changes == []


def test_the_pass_for_a_crawl_reads_everything_once_when_most_works_are_marked(
        fresh: Any) -> None:
    writer, resolver, _prefix = fresh()
    unrelated = [listing(f"Distinct Topic Number {n} about Subject{n} and Matter{n}",
                         PEOPLE[n % 4], year=2019) for n in range(30)]
    paper = [listing(PAPER, "Ann Lee"),
             listing(TITLES[1], "Bob Stone", authors=("Ann Lee", "Bob Stone"))]
    _crawl(writer, [], [*unrelated, *paper], [], TIMES[0])

    first = resolver.run_pending()  # a first crawl: every document marked

    assert first.mode == resolution.FULL and first.pending == 32
    assert first.groups_changed == 1  # the paper and its misprint, as one
    assert resolver.run_pending().mode == resolution.INCREMENTAL  # none marked now

    _crawl(writer, [], [listing(TITLES[2], "Cid Moor", authors=("Ann Lee", "Cid Moor"))],
           [], TIMES[1])
    report = resolver.run_pending()  # 1 of 32 marked

    assert report.mode == resolution.INCREMENTAL and report.documents == 2
    assert resolver.run(full=True, dry_run=True).changes == []


def test_a_work_gone_leaves_its_keys_on_its_tombstone_for_the_pass(
        fresh: Any, opensearch_client: OpenSearch) -> None:
    writer, resolver, prefix = fresh()
    gone = listing(TITLES[7], "Cid Moor")
    _crawl(writer, [], [gone, listing(TITLES[8], "Dan Ray")], [], TIMES[0])
    resolver.run(full=False)

    _crawl(writer, [(gone["work_id"], gone["researcher_id"])], [], [0], TIMES[1])
    tombstones = snapshot(opensearch_client, alias_name(prefix, TOMBSTONES_INDEX))
    assert "w:shedding" in tombstones[gone["work_id"]]["resolve_pending"]

    report = resolver.run(full=False)

    assert report.pending == 1 and report.documents >= 1  # its neighbour, found by its keys
    tombstones = snapshot(opensearch_client, alias_name(prefix, TOMBSTONES_INDEX))
    assert "resolve_pending" not in tombstones[gone["work_id"]]  # settled


def test_a_pair_of_common_words_blocks_alike_in_both_passes(
        fresh: Any, opensearch_client: OpenSearch) -> None:
    # Every word of these titles is past the posting cap, and so is every pair of them:
    # no block holds the typo and its paper in the whole index. The incremental pass
    # reads both (each changed) and must not pair them through a pair of words either,
    # as it did when it sized that block by the documents it read (two).
    writer, resolver, _prefix = fresh()
    tail = "and Data-Driven Partitioning for Time-Series Forecasting at Scale"
    crowd = [listing(f"Method{k} {tail}", f"Person{k} Crowd") for k in range(60)]
    paper = listing(f"Differentiable {tail}", "Ann Lee", authors=("Ann Lee", "Bob Stone"))
    again = listing(f"Differentiable {tail}", "Cid Moor", authors=("Ann Lee", "Bob Stone"))
    typo = listing(f"Differentiale {tail}", "Bob Stone", authors=("Ann Lee", "Bob Stone"))

    report = _reprinted(writer, resolver, [*crowd, paper], [again, typo])

    assert report.documents >= 2
    assert resolver.run(full=True, dry_run=True).changes == []


@pytest.mark.parametrize("grows", [True, False], ids=["listed", "unlisted"])
def test_a_block_the_crawl_takes_across_the_cap_decides_what_only_it_pairs(
        fresh: Any, opensearch_client: OpenSearch, grows: bool) -> None:
    # A printing cut short and its paper share a title's start, a block also of other
    # papers (each of the words, and each pair of them, is held by a hundred, past the
    # cap). Of 50 the block pairs the two, of 51 nothing does. A crawl lists a 49th
    # other paper (50 -> 51) or unlists one (51 -> 50): neither printing was touched, and
    # only the block's size tells the incremental pass to decide their pair again
    # (``unsettled``); a full pass then finds nothing to change.
    writer, resolver, prefix = fresh()
    start = "Quorum Lattice Fabric Widget"
    sharing = [listing(f"{start} Topic{k} Matter{k}", f"Person{k} Crowd") for k in range(49)]
    crowd = [listing(f"Widget Fabric Lattice Quorum Sprocket Item{k}", f"Other{k} Crowd")
             for k in range(51)]
    paper = listing(f"{start} Sprocket Gizmo", "Ann Lee", authors=("Ann Lee", "Bob Stone"))
    cut = listing(f"{start} Sprocket", "Bob Stone", authors=("Ann Lee", "Bob Stone"))
    assert not crossed(48 + 51 + 2, 49 + 51 + 2)  # no word looks up otherwise
    listed: list[tuple[str, str]] = []
    _crawl(writer, listed, [*sharing[:48 if grows else 49], *crowd, paper, cut], [], TIMES[0])
    resolver.run(full=True)

    def together() -> bool:
        return any({paper["work_id"], cut["work_id"]} <= set(group)
                   for group in _groups(opensearch_client, prefix))

    assert together() is grows
    if grows:
        _crawl(writer, listed, sharing[48:], [], TIMES[1])
    else:
        _crawl(writer, listed, [], [48], TIMES[1])  # the 49th other paper, gone

    report = resolver.run(full=False)

    assert report.groups_changed == 1 and together() is not grows
    assert resolver.run(full=True, dry_run=True).changes == []


def test_a_typo_in_the_only_rare_word_meets_inside_a_leave_one_out_block_past_the_cap(
        fresh: Any, opensearch_client: OpenSearch) -> None:
    # The title without its first word is a block of every title here, past the cap,
    # and every other word, pair and start is past it too: the typo'd printing meets its
    # paper only through the part of that block whose left-out words are a typo apart.
    # The pass reads that part of it, not the crowd.
    writer, resolver, prefix = fresh()
    tail = "Accelerating Edge Devices with Gradient Compression"
    rng = random.Random(7)
    firsts: list[str] = []
    while len(firsts) < 60:  # made-up words, no two a typo apart
        word = "".join(rng.choice("bcdfghjklmnpqrstvwz") for _ in range(7))
        if not any(same_word(word, other) for other in firsts):
            firsts.append(word)
    crowd = [listing(f"{first.title()}: {tail}", f"Person{k} Crowd")
             for k, first in enumerate(firsts)]
    people = ("Ann Lee", "Bob Stone", "Cid Moor")
    paper = listing(f"NimbusStream: {tail}", "Ann Lee", authors=people)
    typo = listing(f"Nimbussream: {tail}", "Bob Stone", authors=people)

    report = _reprinted(writer, resolver, [*crowd, paper], [typo])

    assert report.groups_changed == 1 and report.documents < 10
    assert [g for g in _groups(opensearch_client, prefix) if len(g) > 1] == [
        sorted([paper["work_id"], typo["work_id"]])]
    assert resolver.run(full=True, dry_run=True).changes == []

    # Another printing meets the document of two, and the paper's printing going leaves
    # the part of the block to the two typos: each pass as a full one would.
    again = listing(f"Nimbustream: {tail}", "Cid Moor", authors=people)
    _crawl(writer, [], [again], [], TIMES[2])
    resolver.run(full=False)
    assert resolver.run(full=True, dry_run=True).changes == []
    _crawl(writer, [(paper["work_id"], paper["researcher_id"])], [], [0], TIMES[3])
    resolver.run(full=False)
    assert resolver.run(full=True, dry_run=True).changes == []
    assert any({again["work_id"], typo["work_id"]} <= set(g)
               for g in _groups(opensearch_client, prefix))


def test_the_index_tells_the_words_a_leave_one_out_blocks_holders_leave_out(
        fresh: Any, opensearch_client: OpenSearch) -> None:
    writer, _resolver, prefix = fresh()
    tail = "Accelerating Edge Devices with Gradient Compression"
    firsts = ["Nimbusstream", "Nimbussream", "Quorvantix", "The Quorvantix"]
    _crawl(writer, [], [listing(f"{first}: {tail}", f"Person{k} Lee")
                        for k, first in enumerate(firsts)], [], TIMES[0])
    works = alias_name(prefix, "works")
    opensearch_client.indices.refresh(index=works)
    key = "x:-accelerating compression device edge gradient"

    found = neighbourhood.left_out(opensearch_client, works, {key: 4})

    assert found == {key: {"nimbusstream": 1, "nimbussream": 1, "quorvantix": 2}}
    near = {doc_id for doc_id, _ in neighbourhood.near_holders(
        opensearch_client, works, {key: ["nimbussream", "nimbusstream"]}, ["work_id"])}
    assert len(near) == 2
    assert neighbourhood.near_counts(opensearch_client, works, {
        "a": (key, ["quorvantix"]), "b": (key, ["nowhere"])}) == {"a": 2, "b": 0}


def test_the_index_counts_a_pair_of_words_as_the_documents_holding_both(
        fresh: Any, opensearch_client: OpenSearch) -> None:
    writer, _resolver, prefix = fresh()
    titles = ["Streaming Sensor Joins", "Streaming Sensor Windows", "Streaming Graph Joins",
              "Sensor Graph Windows", "Adaptive Streaming Sensor Networks"]
    _crawl(writer, [], [listing(t, f"Person{k} Lee") for k, t in enumerate(titles)], [],
           TIMES[0])
    works = alias_name(prefix, "works")
    opensearch_client.indices.refresh(index=works)
    docs = snapshot(opensearch_client, works).values()
    stored = [set(doc["blocking_keys"]) for doc in docs]
    pairs = [pair_key(a, b) for a, b in itertools.combinations(
        ["streaming", "sensor", "graph", "join", "window", "nowhere"], 2)]
    asked = [*pairs, "w:streaming", "w:nowhere", *sorted(set().union(*stored))[:20]]

    counted = neighbourhood.counts(opensearch_client, works, asked)

    def holding(key: str) -> int:
        need = {word_key(w) for w in pair_key_words(key)} if is_pair_key(key) else {key}
        return sum(need <= keys for keys in stored)
    assert counted == {key: holding(key) for key in asked}
    assert counted[pair_key("streaming", "sensor")] == 3
    assert counted[pair_key("graph", "nowhere")] == 0

    # Told when it has counted enough, the engine stops there.
    both = pair_key("streaming", "sensor")
    assert neighbourhood.counts(opensearch_client, works, [both], {both: 2}) == {both: 2}
    assert neighbourhood.counts(opensearch_client, works, [both], {both: 4}) == {both: 3}


def test_a_pair_block_is_read_only_where_it_can_pair_with_the_change(
        fresh: Any, opensearch_client: OpenSearch) -> None:
    # "streaming" and "sensor" are each past the posting cap, the pair of them is not:
    # every title of the crowd is filed under it, and shares with the new printing only
    # those two of its five distinctive words, too few for blocking to pair them.
    writer, resolver, _prefix = fresh()
    crowd = [listing(f"Streaming Sensor Topic{k} Matter{k} Thing{k}", f"Person{k} Crowd")
             for k in range(30)]
    crowd += [listing(f"Streaming Graph{k} Item{k}", f"Other{k} Crowd") for k in range(30)]
    crowd += [listing(f"Sensor Graph{k} Piece{k}", f"Third{k} Crowd") for k in range(30)]
    paper = listing("Streaming Sensor Compression with Bandwidth Limits", "Ann Lee",
                    authors=("Ann Lee", "Bob Stone"))
    typo = listing("Streaming Sensor Compresion with Bandwidht Limitz", "Bob Stone",
                   authors=("Ann Lee", "Bob Stone"))

    report = _reprinted(writer, resolver, [*crowd, paper], [typo])

    assert report.documents < 30  # not the crowd filed under the pair
    assert resolver.run(full=True, dry_run=True).changes == []


def test_a_neighbours_own_partners_are_read_only_when_it_moves(fresh: Any) -> None:
    # The neighbour shares three words with the change and is read; the partners of
    # its own share two with the change, too few to pair, and are filed with both under
    # the pair of their rarest words. They pair with the neighbour as at the last pass,
    # and the neighbour does not move: none of them is read. (No word of the change's
    # count moves across a step of its rarity.)
    writer, resolver, _prefix = fresh()
    writer.hide_unresolved = False
    crowd = [listing(f"{word} Topic{k} Matter{k} Thing{k}", f"Person{k} Crowd{word}")
             for word in ("Nimbus", "Cart", "Bolt", "Lattice", "Meadow") for k in range(26)]
    partners = [listing(f"Zephyr Quasar Lattice Meadow Item{k}", f"Other{k} Crowd")
                for k in range(14)]
    neighbour = listing("Zephyr Quasar Nimbus Lattice Meadow", "Eve Hart")
    paper = listing("Zephyr Quasar Nimbus Cart Bolt", "Ann Lee", authors=("Ann Lee", "Bob Stone"))
    printing = listing("Zephyr Quasar Nimbus Cart Boltz", "Bob Stone",
                       authors=("Ann Lee", "Bob Stone"))

    report = _reprinted(writer, resolver, [*crowd, *partners, neighbour, paper], [printing])

    assert report.groups_changed == 1  # the printing joins its paper
    assert report.documents < 10
    assert resolver.run(full=True, dry_run=True).changes == []


def test_a_word_is_read_only_where_its_holders_can_pair_with_the_change(fresh: Any) -> None:
    # Forty titles hold each of "zephyr", "quasar" and "nimbus", words within the
    # posting cap whose counts the change moves by too little to matter, each beside
    # words of its own: they share one word with the new printing, too few for blocking
    # to pair. The printing misspells two words of its paper as words other titles
    # hold, rarer than those three: its pairs of rarest words do not lead to the paper,
    # only the words and the title start they share do.
    writer, resolver, _prefix = fresh()
    writer.hide_unresolved = False  # the writer does not mark the paper either
    crowd = [listing(f"{word} Topic{k} Matter{k} Thing{k}", f"Person{k} Crowd{word}")
             for word in ("Zephyr", "Quasar", "Nimbus") for k in range(40)]
    crowd += [listing(f"{word} {topic} Heuristics", "Eve Hart")
              for word in ("Card", "Boat") for topic in ("Sorting", "Racing")]
    paper = listing("Zephyr Quasar Nimbus Cart Bolt", "Ann Lee",
                    authors=("Ann Lee", "Bob Stone"))
    printing = listing("Zephyr Quasar Nimbus Card Boat", "Bob Stone",
                       authors=("Ann Lee", "Bob Stone"))

    report = _reprinted(writer, resolver, [*crowd, paper], [printing])

    assert report.groups_changed == 1  # the printing joins its paper
    assert report.documents < 10  # not the crowds holding its words
    assert resolver.run(full=True, dry_run=True).changes == []


def test_a_document_that_moves_after_a_block_was_read_has_it_read_again() -> None:
    # A settled block's holders were kept where they shared enough with the atoms of
    # the documents then around the change; another that moves must have its own
    # partners there.
    def doc(work_id: str, title: str) -> dict[str, Any]:
        return {"work_id": work_id, "listings": [{"title": title, "researcher_id": "ann-lee",
                                                  "year": 2019}]}
    region = resolution._Region()
    region.add([("early", doc("early", "Zephyr Topic Matter Thing"))])
    region.widened = {"w:zephyr", "w:topic"}
    checked = frozenset({"early"})
    region.filtered = {"w:zephyr": checked, "w:topic": checked}  # read around "early"
    region.add([("late", doc("late", "Zephyr Quasar Nimbus Cart"))])

    counts = dict.fromkeys(["zephyr", "topic", "matter", "thing", "quasar", "nimbu", "cart"], 5)
    region.reopen(["early"], counts)
    assert region.widened == {"w:zephyr", "w:topic"}  # checked against it already

    region.reopen(["late"], counts)
    assert region.widened == {"w:topic"}  # "late" holds "zephyr": read again for it


def test_a_pair_block_moves_only_by_the_changes_holding_both_its_words() -> None:
    # Each word's count moved by two changes, the count of documents holding both by
    # the one change whose marks carry both (before or after it).
    region = resolution._Region()
    region.marked = {"a": {"w:zephyr", "w:quasar"}, "b": {"w:zephyr"}, "c": {"w:quasar"}}
    region.tombstones = {"gone": {"w:zephyr", "w:nimbus"}}
    region.tombstone_atoms = {"gone": 2}

    assert region.slack()["w:zephyr"] == 4
    assert region.pair_slack(pair_key("zephyr", "quasar")) == 1
    assert region.pair_slack(pair_key("nimbus", "zephyr")) == 2
    assert region.pair_slack(pair_key("nimbus", "quasar")) == 0


def test_a_full_pass_settles_a_marked_index_in_parts(
        fresh: Any, opensearch_client: OpenSearch, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every document of a bulk-loaded index is marked: one request settling them all
    # outgrew the node's request limit (HTTP 413) at 100,000 works.
    monkeypatch.setattr(resolution, "READ_PART", 3)
    writer, resolver, prefix = fresh()
    items = [listing(f"Distinct Topic Number {n} about Subject{n}", PEOPLE[n % 4])
             for n in range(8)]
    _crawl(writer, [], items, [], TIMES[0])
    sent: list[int] = []
    real = resolver.joiner._bulk

    def spy(actions: list[dict[str, Any]], report: Any) -> bool:
        sent.append(len(actions))
        return real(actions, report)

    monkeypatch.setattr(resolver.joiner, "_bulk", spy)
    resolver.run(full=True)

    assert sum(sent) >= 8 and max(sent) <= 3
    opensearch_client.indices.refresh(index=alias_name(prefix, "works"))
    marked = opensearch_client.count(index=alias_name(prefix, "works"),
                                     body={"query": {"exists": {"field": "resolve_pending"}}})
    assert marked["count"] == 0


def test_a_full_pass_stores_the_keys_a_new_version_computes(
        fresh: Any, opensearch_client: OpenSearch) -> None:
    # After an upgrade that changes blocking's keys, the stored ones are stale: an
    # incremental pass would miss neighbours through a key no document stores yet.
    writer, resolver, prefix = fresh()
    _crawl(writer, [], [listing(PAPER, PEOPLE[0]), listing(TITLES[7], PEOPLE[1])], [], TIMES[0])
    resolver.run(full=True)
    works = alias_name(prefix, "works")
    current = snapshot(opensearch_client, works)
    stale_id = sorted(current)[0]
    stale = {**current[stale_id], "blocking_keys": current[stale_id]["blocking_keys"][:1]}
    opensearch_client.index(index=works, id=stale_id, body=stale, refresh=True)

    resolver.run(full=True)

    assert snapshot(opensearch_client, works) == current


def _region_of(*titles: str) -> resolution._Region:
    region = resolution._Region()
    region.add([(f"d{k}", {"work_id": f"d{k}", "listings": [
        {"title": title, "researcher_id": f"person-{k}", "year": 2019}]})
        for k, title in enumerate(titles)])
    return region


def _ids(region: resolution._Region, *docs: str) -> set[str]:
    return {atom.work_id for doc in docs for atom in region.atoms(doc)}


@pytest.mark.parametrize(("size", "moved"), [(50, True), (51, True), (45, False)])
def test_holders_of_a_block_the_change_may_take_across_the_cap_are_unsettled(
        size: int, moved: bool) -> None:
    # Their pairs through it may be other than the last pass's, whoever they pair with:
    # the pass decides them all.
    region = _region_of("Zephyr Quasar Nimbus Cart", "Zephyr Quasar Nimbus Wheel",
                        "Orbit Lantern Mosaic")
    start = ">:zephyr quasar nimbu"  # the first three words of the first two
    assert all(start in region.filing(region.atoms(d)[0]).starts for d in ("d0", "d1"))
    region.marked = {"changed": {start}}  # one atom, its keys before or after
    counts = dict.fromkeys(["zephyr", "quasar", "nimbu", "cart", "wheel", "orbit",
                            "lantern", "mosaic"], 5)

    found = region.unsettled(counts, {start: size})

    assert found == (_ids(region, "d0", "d1") if moved else set())


def test_holders_of_a_word_whose_move_may_change_what_they_look_up_are_unsettled() -> None:
    region = _region_of("Zephyr Quasar Nimbus Cart", "Zephyr Orbit Lantern Mosaic Wheel")
    region.marked = {"changed": {"w:zephyr"}, "other": {"w:zephyr"}}  # moved by 2 at most
    # "zephyr" at 5 may have been 3 or may be 7: a rank of its own at each. Beside
    # words held by 2 (rarer still), the first looks up its three rarest words whatever
    # it is (never "zephyr"); the second, beside words held by 6, may look it up or not.
    counts = {"zephyr": 5, "quasar": 2, "nimbu": 2, "cart": 2,
              "orbit": 6, "lantern": 6, "mosaic": 6, "wheel": 6}

    assert region.unsettled(counts, {}) == _ids(region, "d1")


def test_an_atom_held_by_two_documents_is_unsettled() -> None:
    region = _region_of("Zephyr Quasar Nimbus Cart")
    region.add([("copy", {"work_id": "d0", "listings": [
        {"title": "Zephyr Quasar Nimbus Cart", "researcher_id": "person-9", "year": 2019}]})])

    assert region.unsettled(dict.fromkeys(["zephyr", "quasar", "nimbu", "cart"], 5), {}) == {
        atom.work_id for atom in region.atoms("d0")}


@pytest.mark.parametrize(("size", "moved"), [(50, True), (45, False)])
def test_atoms_filed_under_a_pair_block_the_change_may_take_across_the_cap_are_unsettled(
        size: int, moved: bool) -> None:
    region = _region_of("Zephyr Quasar Nimbus Cart", "Zephyr Quasar Nimbus Wheel",
                        "Orbit Lantern Mosaic")
    # Held by 30 atoms, one more or less: the same rank, so no one looks up otherwise.
    counts = dict.fromkeys(["zephyr", "quasar", "nimbu", "cart", "wheel", "orbit",
                            "lantern", "mosaic"], 30)
    region._filed_pairs(counts)  # each files under pairs of its three rarest words
    region.marked = {"changed": {"w:nimbu", "w:quasar"}}

    found = region.unsettled(counts, {pair_key("nimbu", "quasar"): size})

    assert found == (_ids(region, "d0", "d1") if moved else set())


def test_a_word_only_a_work_gone_held_moves_by_the_index_count_not_from_nothing() -> None:
    # An unlist alone: no document of the region holds the tombstone's words yet. Held by
    # 101 documents in the index, one more or less crosses no step of blocking's reading;
    # one held by 2 may have been held by 3, or by 1 (no other atom holds it then).
    region = resolution._Region()
    region.tombstones = {"gone": {"w:quorum", "w:gizmo"}}
    region.doc_counts.update({"w:quorum": 101, "w:gizmo": 2})

    assert region.moved_words({}) == {"gizmo": (1, 3)}
