"""The arXiv clients against arXiv's own responses, and the stand-ins checked against them.

The real files (``tests.support.arxiv_real``: the current OAI-PMH server's rendered
pages and error answers, recorded query-API feeds) are served from 127.0.0.1 and read
by the same code as a harvest or a crawl uses. Where a test says "both", it runs
against the real answers and the stand-in (``standins.oaipmh``) alike, so a stand-in
that drifts from arXiv fails here. Skipped, saying why, without ``ARXIV_REAL_DATA``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit
from xml.etree import ElementTree as ET

import pytest
from click.testing import CliRunner
from opensearchpy import OpenSearch

from fixtures.render import read_page, render_lines
from scholarindex.core.enrichment_status import DONE
from scholarindex.core.identity import split_dois
from scholarindex.enrichment.client import ArxivFetcher
from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.enrichment.errors import BadQuery
from scholarindex.enrichment.harvest import HarvestReport, harvest
from scholarindex.enrichment.metadata import clean_text
from scholarindex.enrichment.mirror import ALL, ArxivMirror
from scholarindex.enrichment.oaipmh import OaiClient, OaiError, parse_page
from scholarindex.indexing.identity import identity_keys
from scholarindex.ops.cli import main
from standins.arxiv import ArxivStandIn
from standins.oaipmh import OaiStandIn, set_specs
from tests.support.arxiv_real import (
    ERROR_CASES,
    NEW,
    RealApiFeeds,
    RealOaiEndpoint,
    real_data,
    token_of,
    truth,
)
from tests.support.crawl import ROOT, crawl_profiles
from tests.support.settings import enrichment_config_with

OAI = "{http://www.openarchives.org/OAI/2.0/}"
RAW = "{http://arxiv.org/OAI/arXivRaw/}"
ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV_ATOM = "{http://arxiv.org/schemas/atom}"
REVISED = "0806.4129"  # v1 2008-06-25 ... v6 2014-12-12
REVISED_TITLE = ("Gauge Fixing in the Maxwell Like Gravitational Theory in Minkowski Spacetime "
                 "and in the Equivalent Lorentzian Spacetime")


def config_for(oai_url: str, cache: Path, **overrides: object) -> EnrichmentConfig:
    settings: dict = {"oai_url": oai_url, "cache_dir": str(cache), "delay_seconds": 0,
                      "api_url": "http://127.0.0.1:9/api/query?{}", "backoff_seconds": 0.01,
                      "backoff_max_seconds": 0.05, "timeout_seconds": 5, "max_attempts": 2}
    return replace(enrichment_config_with(), **{**settings, **overrides})


def run_harvest(config: EnrichmentConfig, sets: tuple[str, ...] = (),
                **kwargs: object) -> HarvestReport:
    client = OaiClient(config)
    try:
        return harvest(ArxivMirror(config.cache_dir), client, sets, **kwargs)  # type: ignore[arg-type]
    finally:
        client.close()


@pytest.fixture
def real() -> Iterator[RealOaiEndpoint]:
    with RealOaiEndpoint() as endpoint:
        yield endpoint


@pytest.fixture(params=["real", "standin"])
def endpoint(request: pytest.FixtureRequest) -> Iterator[RealOaiEndpoint | OaiStandIn]:
    """Both: arXiv's recorded answers, and the stand-in."""
    server = RealOaiEndpoint() if request.param == "real" else OaiStandIn(page_size=5)
    with server:
        yield server


def sent(endpoint: RealOaiEndpoint | OaiStandIn) -> list[dict[str, str]]:
    """The arguments of every request the endpoint received."""
    if isinstance(endpoint, RealOaiEndpoint):
        return [{k: v[0] for k, v in args.items()} for args in endpoint.requests]
    return [r.args for r in endpoint.requests]


# --- the harvest of arXiv's real pages ----------------------------------------------------


def test_the_real_pages_are_harvested_once_each_with_every_versions_date(
        real: RealOaiEndpoint, tmp_path: Path) -> None:
    expected = truth()
    report = run_harvest(config_for(real.base_url, tmp_path))
    assert report.requests == 3 and [s.file for s in real.seen] == [
        "newoai-listrecords-arXivRaw-p1.xml", "newoai-listrecords-arXivRaw-p2.xml",
        "newoai-listrecords-arXivRaw-p3.xml"]
    mirror = ArxivMirror(tmp_path)
    assert report.records == mirror.size() == len(expected) == 503
    wrong = []
    for arxiv_id, paper in expected.items():
        held = mirror.get(arxiv_id)
        assert held is not None, arxiv_id
        versions = mirror.versions(arxiv_id)
        if (held["published"] != paper["v1_datetime"].replace("Z", "+00:00")
                or held["published"][:10] != paper["v1_date"] or versions[0] != held["published"]
                or len(versions) != paper["versions"]
                or held["updated"][:10] != paper["latest_date"] == versions[-1][:10]
                or held["entry_id"] != f"http://arxiv.org/abs/{arxiv_id}v{paper['versions']}"
                or held["categories"] != paper["categories"]
                or held["title"] != " ".join(paper["title"].split())
                or split_dois(held["doi"]) != paper["dois"]):
            wrong.append(arxiv_id)
    assert wrong == []
    assert mirror.get(REVISED)["published"][:10] == "2008-06-25"  # type: ignore[index]
    assert all("until" not in args for args in sent(real))


def test_the_arxiv_format_would_have_dated_296_papers_by_their_latest_version(
        real: RealOaiEndpoint) -> None:
    """Why the harvest reads arXivRaw: the arXiv format's <created> is the latest version's day."""
    expected = truth()
    created: dict[str, str] = {}
    for page in (1, 2, 3):
        body = (real.directory / f"newoai-listrecords-arXiv-p{page}.xml").read_text("utf-8")
        created.update(re.findall(r"<id>([^<]+)</id>\s*<created>([^<]+)</created>", body))
    assert len(created) == 503
    assert all(created[i] == paper["latest_date"] for i, paper in expected.items())
    assert sum(created[i] != paper["v1_date"] for i, paper in expected.items()) == 296


def test_authors_read_as_arxivs_own_parser_reads_them(real: RealOaiEndpoint,
                                                       tmp_path: Path) -> None:
    """The arXiv format's <author> elements (arXiv's parser) against our reading of the raw
    string. Kept apart on purpose: a hyphenated initial stays whole ("J.-P. Chen", where
    arXiv's parser prints "J. -P. Chen"), and two of arXiv's slips are not copied."""
    run_harvest(config_for(real.base_url, tmp_path))
    mirror = ArxivMirror(tmp_path)
    differ = {}
    for arxiv_id, paper in truth().items():
        ours = mirror.get(arxiv_id)["authors"]  # type: ignore[index]
        theirs = [re.sub(r"\b(\w)\. -(\w)", r"\1.-\2", name) for name in paper["authors"]]
        if ours != theirs:
            differ[arxiv_id] = [(a, b) for a, b in zip(ours, theirs, strict=True) if a != b]
    assert differ == {
        "1102.0316": [("G. David Forney Jr.", "G. David Forney, Jr.")],
        "math/0510544": [("Linsheng Zhu", "and Linsheng Zhu")],  # "Dong Liu and and Linsheng"
    }


def test_each_doi_of_a_multi_doi_record_is_an_identity_key_of_its_own(
        real: RealOaiEndpoint, tmp_path: Path) -> None:
    run_harvest(config_for(real.base_url, tmp_path))
    mirror = ArxivMirror(tmp_path)
    several = {i: p["dois"] for i, p in truth().items() if len(p["dois"]) > 1}
    assert {"1011.0730", "1006.4407"} <= set(several)
    for arxiv_id, dois in several.items():
        doc = {"arxiv_id": arxiv_id, "arxiv": mirror.get(arxiv_id),
               "enrichment": {"status": DONE}}
        assert identity_keys(doc) == [f"arxiv:{arxiv_id}", *(f"doi:{d.lower()}" for d in dois)]
    two_dois = mirror.get("1006.4407")
    assert two_dois is not None
    assert two_dois["doi"] == "10.1002/andp.201000099 10.1002/andp.201200739"
    # The old endpoint's arXivRaw page: two DOIs in one field too, and a token with totals.
    legacy = real_data() / "oai-export-legacy" / "mikesaelim-listrecords-arXivRaw-token.xml"
    page = parse_page(legacy.read_bytes())
    assert len(page.records) == 6 and page.token == "726959|1001"
    first = page.records[0]
    assert first.id == "0704.0471" and split_dois(first.metadata["doi"]) == [  # type: ignore[index]
        "10.1103/PhysRevC.76.024606", "10.1103/PhysRevC.76.039902"]
    assert first.metadata["title"].startswith("Density dependence of the symmetry energy and")  # type: ignore[index]


def test_a_second_harvest_asks_from_the_day_the_first_reached_and_gets_nothing_new(
        real: RealOaiEndpoint, tmp_path: Path) -> None:
    config = config_for(real.base_url, tmp_path)
    run_harvest(config)
    today = ArxivMirror(tmp_path).state(ALL).complete_until
    again = run_harvest(config)
    assert again.requests == 1 and again.records == 0
    assert sent(real)[-1] == {"verb": "ListRecords", "metadataPrefix": "arXivRaw", "from": today}
    assert real.seen[-1].file == "newoai-error-noRecordsMatch.xml"
    assert ArxivMirror(tmp_path).size() == 503


# --- refused requests: both ---------------------------------------------------------------


@pytest.mark.parametrize(("sets", "from_day", "reason"), [
    ((), "2000-01-01", "start date too early"),
    (("cs.LG",), None, "Set does not exist"),
])
def test_a_refused_request_fails_with_arxivs_reason_and_changes_no_saved_state(
        endpoint: RealOaiEndpoint | OaiStandIn, tmp_path: Path, sets: tuple[str, ...],
        from_day: str | None, reason: str) -> None:
    config = config_for(endpoint.base_url, tmp_path)
    mirror = ArxivMirror(tmp_path)
    for attempt in range(2):  # on a fresh mirror, then on a complete one
        before = mirror.states()
        with pytest.raises(OaiError) as refused:
            run_harvest(config, sets, from_day=from_day)
        assert refused.value.reason == reason and refused.value.code == "badArgument"
        assert mirror.states() == before
        assert all(s.scope != "cs.LG" for s in mirror.states())
        report = run_harvest(config)  # a plain harvest is not refused in turn
        assert report.scopes[0].scope == ALL and mirror.state(ALL).complete
        assert mirror.size() > 0, attempt
    assert all("until" not in args for args in sent(endpoint))


def env(url: str, cache: Path) -> dict[str, str]:
    return {"ARXIV_OAI_URL": url, "ARXIV_CACHE_DIR": str(cache), "ARXIV_DELAY_SECONDS": "0",
            "ARXIV_BACKOFF_SECONDS": "0.01", "ARXIV_MAX_ATTEMPTS": "2"}


def test_the_command_refuses_what_arxiv_would_before_asking_and_a_plain_run_works(
        endpoint: RealOaiEndpoint | OaiStandIn, tmp_path: Path) -> None:
    runner = CliRunner()
    for args, says in ((["--from", "2000-01-01"], "before arXiv's earliest datestamp 2005-09-16"),
                       (["--from", "2999-01-01"], "is after today"),
                       (["--set", "cs.XX.YY"], "neither an arXiv OAI set"),
                       (["--set", "cs:hep-th"], "is not an arXiv OAI set")):
        refused = runner.invoke(main, ["arxiv", "harvest", *args], env=env(endpoint.base_url,
                                                                           tmp_path))
        assert refused.exit_code == 2, refused.output
        assert says in refused.output
        assert sent(endpoint) == []  # nothing asked
    plain = runner.invoke(main, ["arxiv", "harvest", "--json"],
                          env=env(endpoint.base_url, tmp_path))
    assert plain.exit_code == 0, plain.output
    # A category is read as its set: cs.LG is cs:cs:LG (no records in the real data).
    asked_before = len(sent(endpoint))
    dotted = runner.invoke(main, ["arxiv", "harvest", "--set", "cs.LG"],
                           env=env(endpoint.base_url, tmp_path))
    assert dotted.exit_code == 0, dotted.output
    assert "cs.LG is arXiv's OAI set cs:cs:LG" in dotted.output
    assert sent(endpoint)[asked_before]["set"] == "cs:cs:LG"
    again = runner.invoke(main, ["arxiv", "harvest"], env=env(endpoint.base_url, tmp_path))
    assert again.exit_code == 0, again.output
    assert all("until" not in args for args in sent(endpoint))


# --- the stand-in against the real answers -------------------------------------------------


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_the_standin_refuses_as_arxiv_does_in_arxivs_words(name: str) -> None:
    real_root = ET.parse(real_data() / NEW / name).getroot()
    real_error = real_root.find(OAI + "error")
    assert real_error is not None
    with OaiStandIn() as standin:
        body, code = standin.answer({k: [v] for k, v in ERROR_CASES[name].items()})
    error = ET.fromstring(body).find(OAI + "error")
    assert error is not None and code == real_error.get("code") == error.get("code")
    assert error.text == real_error.text


def test_the_standin_refuses_a_repeated_argument_as_arxiv_does() -> None:
    real_error = ET.parse(real_data() / NEW / "newoai-error-repeated-arg.xml").getroot().find(
        OAI + "error")
    with OaiStandIn() as standin:
        body, _ = standin.answer({"verb": ["ListRecords"], "metadataPrefix": ["arXiv"],
                                  "set": ["cs", "math"]})
    assert ET.fromstring(body).find(OAI + "error").text == real_error.text  # type: ignore[union-attr]


def _records(body: bytes) -> list[ET.Element]:
    return ET.fromstring(body).findall(f"{OAI}ListRecords/{OAI}record")


def test_the_standins_pages_are_shaped_as_arxivs(tmp_path: Path) -> None:
    real_page = (real_data() / NEW / "newoai-listrecords-arXivRaw-p1.xml").read_bytes()
    with OaiStandIn(page_size=5) as standin:
        first, _ = standin.answer({"verb": ["ListRecords"], "metadataPrefix": ["arXivRaw"]})
        token = token_of(first)
        assert token is not None
        last = first
        while (following := token_of(last)) is not None:
            last, _ = standin.answer({"verb": ["ListRecords"], "resumptionToken": [following]})
        arxiv_format, _ = standin.answer({"verb": ["ListRecords"], "metadataPrefix": ["arXiv"]})
    # Tokens: the request's arguments, from= and skip=, URL-encoded; no totals; a last
    # page of a resumed list ends with an empty token.
    for page in (real_page, first):
        node = ET.fromstring(page).find(f"{OAI}ListRecords/{OAI}resumptionToken")
        assert node is not None and set(node.attrib) == {"expirationDate"}
        args = parse_qs(unquote(node.text or ""))
        assert set(args) == {"verb", "metadataPrefix", "from", "skip"}
    tail = ET.fromstring(last).find(f"{OAI}ListRecords/{OAI}resumptionToken")
    assert tail is not None and not (tail.text or "").strip() and not tail.attrib
    real_tail = (real_data() / NEW / "newoai-listrecords-arXivRaw-p3.xml").read_bytes()
    assert b"<resumptionToken/>" in real_tail
    # Records: the stand-in's elements are arXiv's, in arXiv's order; versions alike.
    real_tags = [[c.tag for c in r.find(f"{OAI}metadata/{RAW}arXivRaw")]  # type: ignore[union-attr]
                 for r in _records(real_page)]
    order = {tag: i for tags in real_tags for i, tag in enumerate(dict.fromkeys(tags))}
    for record in _records(first):
        tags = [c.tag for c in record.find(f"{OAI}metadata/{RAW}arXivRaw")]  # type: ignore[union-attr]
        assert set(tags) <= set(order), tags
        assert [t for t in dict.fromkeys(tags)] == sorted(dict.fromkeys(tags),
                                                          key=order.__getitem__)
    # Both parse to the same kind of record; the arXiv format's <created> is the latest
    # version's day in both.
    ours = parse_page(first).records[0]
    theirs = parse_page(real_page).records[0]
    assert set(ours.metadata) == set(theirs.metadata)  # type: ignore[arg-type]
    assert ours.versions[0] == ours.metadata["published"]  # type: ignore[index]
    for record in _records(arxiv_format):
        created = record.findtext(f"{OAI}metadata/{{http://arxiv.org/OAI/arXiv/}}arXiv/"
                                  "{http://arxiv.org/OAI/arXiv/}created")
        arxiv_id = record.findtext(f"{OAI}header/{OAI}identifier").rsplit(":", 1)[-1]  # type: ignore[union-attr]
        entry = standin._records[arxiv_id].entry
        assert created == entry["updated"][:10]


def test_the_standin_names_sets_as_arxiv_does() -> None:
    """Every real record's setSpecs are what the stand-in gives its categories."""
    mismatched = []
    for page in (1, 2, 3):
        body = (real_data() / NEW / f"newoai-listrecords-arXivRaw-p{page}.xml").read_bytes()
        for record in _records(body):
            specs = {s.text for s in record.findall(f"{OAI}header/{OAI}setSpec")}
            categories = record.findtext(f"{OAI}metadata/{RAW}arXivRaw/{RAW}categories") or ""
            if set(set_specs(categories.split())) != specs:
                mismatched.append((categories, specs))
    assert mismatched == []


# --- the crawl: a revised paper listed with its first year -------------------------------


def test_a_crawl_listing_the_revised_paper_with_its_first_year_gets_it_from_the_mirror(
        real: RealOaiEndpoint, arxiv_api: ArxivStandIn, tmp_path: Path, opensearch_url: str,
        index_prefix: str, opensearch_client: OpenSearch) -> None:
    """0806.4129, v1 2008, v6 2014, listed as 2008 on a profile: the crawl (the profiles
    spider, arXiv enrichment, indexing) takes its id from the mirror (all of arXiv, fresh),
    and the query API is never asked."""
    cache = tmp_path / "arxiv-cache"
    run_harvest(config_for(real.base_url, cache))
    assert ArxivMirror(cache).answers_misses(86400)
    seed = (ROOT / "fixtures" / "seeds" / "bzpeer_yinmin_zhong.txt").read_text()
    relibra = ("ReLibra: Routing-Replay-Guided Load Balancing for MoE Training in "
               "Reinforcement Learning")
    page_text = (seed.replace(relibra, REVISED_TITLE).replace("Yinmin Zhong", "Roldao da Rocha")
                 .replace("preprint2026arXiv", "preprint2008arXiv"))
    page = tmp_path / "profile.html"
    page.write_text(render_lines(read_page(page_text)), encoding="utf-8")
    result = crawl_profiles(tmp_path, {
        "ARXIV_ENABLED": "true", "ARXIV_API_URL": arxiv_api.api_url,
        "ARXIV_OAI_URL": real.base_url, "ARXIV_DELAY_SECONDS": "0",
        "ARXIV_CACHE_DIR": str(cache), "INDEX_ENABLED": "true", "OPENSEARCH_URL": opensearch_url,
        "INDEX_PREFIX": index_prefix, "INCREMENTAL_ENABLED": "false"}, urls=page.as_uri())
    listed = [i for i in result.items if i["kind"] == "work"]
    assert [(w["title"], w["year"]) for w in listed] == [(REVISED_TITLE, 2008)]
    opensearch_client.indices.refresh(index=f"{index_prefix}works")
    hits = opensearch_client.search(index=f"{index_prefix}works")["hits"]["hits"]
    assert len(hits) == 1
    doc = hits[0]["_source"]
    assert doc["arxiv_id"] == REVISED and doc["enrichment"]["status"] == DONE
    assert doc["arxiv"]["published"][:10] == "2008-06-25"
    assert arxiv_api.request_count == 0
    assert result.stats.get("arxiv/mirror_answers") == 1
    assert "arxiv/requests" not in result.stats


# --- the query API's real feeds -------------------------------------------------------------


def _raw_entries(path: Path) -> list[dict]:
    """The feed's entries as the XML holds them, before any of our parsing."""
    root = ET.parse(path).getroot()
    entries = []
    for node in root.findall(ATOM + "entry"):
        primary = node.find(ARXIV_ATOM + "primary_category")
        entries.append({
            "id": node.findtext(ATOM + "id", "").rsplit("/abs/", 1)[-1],
            "title": node.findtext(ATOM + "title"), "summary": node.findtext(ATOM + "summary"),
            "published": node.findtext(ATOM + "published"),
            "updated": node.findtext(ATOM + "updated"),
            "authors": [a.findtext(ATOM + "name", "") for a in node.findall(ATOM + "author")],
            "primary_category": primary.get("term") if primary is not None else None,
            "categories": [c.get("term") for c in node.findall(ATOM + "category")],
            "doi": node.findtext(ARXIV_ATOM + "doi"),
            "journal_ref": node.findtext(ARXIV_ATOM + "journal_ref"),
            "comment": node.findtext(ARXIV_ATOM + "comment")})
    return entries


@pytest.fixture
def feeds() -> Iterator[RealApiFeeds]:
    with RealApiFeeds() as server:
        yield server


def fetch(feeds: RealApiFeeds, path: Path, tmp_path: Path, api_url: str | None = None
          ) -> list[dict]:
    feeds.file = path
    config = config_for("http://127.0.0.1:9/oai", tmp_path, api_url=api_url or feeds.api_url,
                        page_size=10, max_pages=1, empty_page_confirmations=1)
    fetcher = ArxivFetcher(config)
    try:
        return fetcher.search('ti:"anything"').entries
    finally:
        fetcher.close()


def test_the_real_feeds_parse_to_the_same_fields_as_the_mirrors_records(
        feeds: RealApiFeeds, tmp_path: Path) -> None:
    """Each paper of each recorded feed, served again over OAI-PMH (arXivRaw, by the
    stand-in, from the feed's own raw fields) and harvested: the mirror holds exactly
    what the query API's parse gave."""
    papers = [p for p in feeds.feeds() if "id_abc" not in p.name and "0000.0000" not in p.name]
    assert len(papers) == 11
    line_breaks = 0
    for path in papers:
        raw = _raw_entries(path)
        assert raw, path.name
        entries = fetch(feeds, path, tmp_path / path.stem)
        assert [e["id"] for e in entries] == [r["id"].rsplit("v", 1)[0] for r in raw]
        for entry, source in zip(entries, raw, strict=True):
            for field in ("title", "summary", "comment", "journal_ref"):
                line_breaks += "\n" in (source[field] or "")
                assert entry[field] == clean_text(source[field]) or (
                    field == "title" and entry[field] == ""), (path.name, field)
            assert entry["doi"] == (" ".join(split_dois(source["doi"])) or None)
        with OaiStandIn(entries=raw) as oai:
            run_harvest(config_for(oai.base_url, tmp_path / f"{path.stem}-mirror"))
        mirror = ArxivMirror(tmp_path / f"{path.stem}-mirror")
        for entry in entries:
            assert mirror.get(entry["id"]) == entry, (path.name, entry["id"])
    assert line_breaks > 0  # the feeds do carry line breaks for the normalisation to remove


def test_the_real_error_and_empty_feeds(feeds: RealApiFeeds, tmp_path: Path) -> None:
    with pytest.raises(BadQuery):
        fetch(feeds, feeds.directory / "arxivpy-2026-id_abc_s0_m100_b79c8dcf6bc3.xml", tmp_path)
    assert len(feeds.paths) == 1  # a 400 is not retried
    empty = feeds.directory / "arxivpy-2026-id_0000.0000_s0_m100_8b51d9633a68.xml"
    assert fetch(feeds, empty, tmp_path) == []


def test_no_query_argument_is_sent_twice(feeds: RealApiFeeds, tmp_path: Path) -> None:
    path = feeds.directory / "arxivpy-2026-id_1605.08386_s0_m100_199195aa31ad.xml"
    fetch(feeds, path, tmp_path)
    fetch(feeds, path, tmp_path, api_url=feeds.api_url + "&sortBy=submittedDate")
    assert len(feeds.paths) == 2
    for sent_path, sort in zip(feeds.paths, ("relevance", "submittedDate"), strict=True):
        query = urlsplit(sent_path).query
        names = [pair.split("=", 1)[0] for pair in query.split("&")]
        assert len(names) == len(set(names)), query
        assert parse_qs(query)["sortBy"] == [sort]
