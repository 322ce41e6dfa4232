"""The profiles spider through Scrapy against a real local HTTP site.

In-process crawls (``crawl_profiles``), plus one run of the real ``scrapy crawl``
command for what only the command does: ``-a url_file``, ``-O`` and the exit status.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest
from scrapy import signals

from standins.site import SiteServer
from tests.support.crawl import crawl_profiles, run_crawl

FIXTURES = Path(__file__).parent.parent / "fixtures"
SITE = FIXTURES / "site"
SITEMAP = json.loads((SITE / "sitemap.json").read_text())
RESEARCHER_CONTRACT = (
    "kind id url name affiliation trust_score trust_label verification_level claimed "
    "open_to_collaborate works_count followers topics_count collaborators_count field h_index "
    "papers_count citations novelty_pct ai_score"
).split()
WORK_CONTRACT = (
    "kind work_id title abstract type year date venue category score authors authors_truncated "
    "code researcher_id researcher_name"
).split()


@pytest.fixture(scope="module")
def site():
    with SiteServer(SITE) as server:
        yield server


@pytest.fixture
def url_file(site: SiteServer, tmp_path: Path) -> Path:
    lines = (SITE / "urls.txt").read_text().splitlines()
    path = tmp_path / "urls.txt"
    path.write_text("\n".join(site.url(x) if x.startswith("/") else x for x in lines))
    return path


def expected_for(site: SiteServer, url: str) -> dict:
    stem = SITEMAP[url.removeprefix(site.base)]["stem"]
    return json.loads((FIXTURES / "expected" / f"{stem}.json").read_text())


@pytest.mark.process
def test_url_file_over_http_gives_exact_items(site, url_file, tmp_path) -> None:
    result = run_crawl(tmp_path, "-a", f"url_file={url_file}",
                       settings={"AUTOTHROTTLE_ENABLED": "false"})
    assert result.returncode == 0, result.log[-2000:]
    researchers, works = result.kind("researcher"), result.kind("work")
    assert len(researchers) == 5 and len(works) == 26
    assert len({w["work_id"] for w in works}) == 25
    for researcher in researchers:
        want = expected_for(site, researcher["url"])
        assert researcher["name"] == want["researcher"]["name"]
        got = [w for w in works if w["researcher_id"] == researcher["id"]]
        assert [w["title"] for w in got] == [w["title"] for w in want["works"]]
        assert [w["abstract"] for w in got] == [w["abstract"] for w in want["works"]]
    relibra = [w for w in works if w["title"].startswith("ReLibra")]
    assert {w["researcher_name"] for w in relibra} == {"Chao Jin", "Yinmin Zhong"}
    assert len({w["work_id"] for w in relibra}) == 1
    assert result.report["pages"]["parsed"] == 5


def test_parse_only_export_follows_the_contract(site, tmp_path) -> None:
    urls = ",".join(site.url(p) for p in ("/bzpeer/researchers/chao-jin/",
                                          "/papercards/authors/jialiang-cheng.html"))
    result = crawl_profiles(tmp_path, urls=urls)
    assert result.returncode == 0
    for item in result.items:
        keys = RESEARCHER_CONTRACT if item["kind"] == "researcher" else WORK_CONTRACT
        assert set(keys) <= set(item), set(keys) - set(item)
    beam = next(w for w in result.kind("work") if w["title"].startswith("BEAM"))
    assert beam["date"] == "2026-05-14" and beam["authors_truncated"] is True


@pytest.mark.parametrize(
    ("depth", "expected_paths"),
    [
        (1, {"/bzpeer/researchers/mateus-oliveira/", "/papercards/authors/tomas-ferreira.html"}),
        (2, {"/bzpeer/researchers/mateus-oliveira/", "/papercards/authors/tomas-ferreira.html",
             "/bzpeer/researchers/jose-luis-penalver/"}),
    ],
)
def test_follow_reaches_coauthor_profiles_up_to_depth(site, url_file, tmp_path, depth,
                                                      expected_paths) -> None:
    result = crawl_profiles(tmp_path, {"DEPTH_LIMIT": str(depth)}, url_file=str(url_file),
                            follow="true")
    assert result.returncode == 0
    seeds = {line for line in (SITE / "urls.txt").read_text().splitlines() if line[:1] == "/"}
    reached = {r["url"].removeprefix(site.base) for r in result.kind("researcher")}
    assert reached == seeds | expected_paths
    assert not any("/private/" in path for path in site.requests)  # robots.txt obeyed
    assert "/about.html" not in site.requests  # not a profile link


def test_follow_off_fetches_only_the_given_pages(site, url_file, tmp_path) -> None:
    result = crawl_profiles(tmp_path, url_file=str(url_file))
    assert len(result.kind("researcher")) == 5


def test_file_urls_plain_text_and_html(tmp_path) -> None:
    urls = [(FIXTURES / "seeds" / "bzpeer_chao_jin.txt").as_uri(),
            (FIXTURES / "html" / "spans" / "papercards_jialiang_cheng.html").as_uri()]
    result = crawl_profiles(tmp_path, urls=",".join(urls))
    assert result.returncode == 0
    assert sorted(r["name"] for r in result.kind("researcher")) == ["Chao Jin", "Jialiang Cheng"]
    assert len(result.kind("work")) == 8


def test_a_page_in_a_wrong_encoding_is_counted_by_its_problems_kind(tmp_path) -> None:
    broken = FIXTURES / "html" / "broken" / "bzpeer_kadri_tamm.utf8_declared_windows1252.html"
    result = crawl_profiles(tmp_path, urls=broken.as_uri())
    assert result.stats["profiles/encoding_problem"] == 1
    assert result.stats["profiles/parsed"] == 1
    assert f"{broken.as_uri()}: encoding: declared windows-1252 but the bytes are UTF-8" \
        in result.log


def test_bad_input_is_counted_and_logged_never_fatal(site, tmp_path) -> None:
    plain = (FIXTURES / "seeds" / "bzpeer_chao_jin.txt").read_bytes()
    site.routes["/plain-profile.txt"] = (200, {"Content-Type": "text/plain"}, plain)
    site.routes["/truncated.html"] = (
        200, {"Content-Type": "text/html"},
        (FIXTURES / "html" / "lines" / "bzpeer_mateus_oliveira_truncated.html").read_bytes())
    urls = [site.url(p) for p in ("/plain-profile.txt", "/truncated.html", "/login.html",
                                  "/_status/404", "/_status/503", "/_slow/5", "/_huge/9")]
    result = crawl_profiles(tmp_path, {"DOWNLOAD_TIMEOUT": "1", "RETRY_TIMES": "1"},
                            urls=",".join(urls) + ",ftp://example.org/x")
    stats, log = result.stats, result.log
    assert stats["profiles/parsed"] == 2
    assert stats["profiles/unrecognized"] == 1
    assert stats["profiles/truncated"] == 1
    assert stats["profiles/failed/http_404"] == 1
    assert stats["profiles/failed/http_503"] == 1
    assert stats["profiles/failed"] == 4  # 404, 503 after retry, timeout, too large
    assert stats["profiles/bad_url"] == 1
    assert f"{site.url('/login.html')}: not a profile page" in log
    assert "Traceback" not in log


def test_listings_misread_or_missing_are_counted_logged_and_reported(site, tmp_path) -> None:
    """A page whose listings fall short of its count, or with a listing that has no title of
    its own, is a stat, a warning with its URL and a count in the run report."""
    plain = (FIXTURES / "seeds" / "bzpeer_chao_jin.txt").read_text(encoding="utf-8")
    listed = 5
    works = plain[plain.index(f"{listed} published item(s)"):]
    # The first listing's title replaced by an abstract's placeholder: left out.
    first_title = works.split("\n\n")[2]
    untitled = plain.replace(first_title, "Abstract not available.", 1)
    # Two listings more announced than printed: short of the count.
    short = plain.replace(f"{listed} published item(s)", f"{listed + 2} published item(s)", 1)
    for path, text in {"/untitled.txt": untitled, "/short.txt": short}.items():
        site.routes[path] = (200, {"Content-Type": "text/plain"}, text.encode())
    result = crawl_profiles(tmp_path, urls=",".join(site.url(p) for p in ("/untitled.txt",
                                                                          "/short.txt")))
    stats = result.stats
    assert stats["profiles/untitled"] == 1
    assert stats["profiles/truncated"] == 2
    assert stats["profiles/listings_unread"] == 3  # 1 left out, 2 never printed
    assert f"{site.url('/untitled.txt')}: listings without a title of their own, left out " \
        f"(untitled listing 1: its title line holds an abstract" in result.log
    assert f"{site.url('/short.txt')}: 2 of the {listed + 2} listings the page announces " \
        "not read" in result.log
    report = result.report
    assert report is not None
    assert (report["pages"]["untitled"], report["pages"]["truncated"],
            report["listings_unread"]) == (1, 2, 3)
    titles = [w["title"] for w in result.kind("work")
              if w["researcher_url"] == site.url("/untitled.txt")]
    assert len(titles) == listed - 1 and "Abstract not available." not in titles


def test_undated_cards_are_listings_and_a_guessed_split_is_counted(site, tmp_path) -> None:
    from fixtures.cards import UNDATED_SAMPLE, Card, card_page, rendered

    dated = Card("EDiT: A Local-SGD-Based Efficient Distributed Training Method",
                 "Jialiang Cheng, Ning Gao et al.", "Distributed training is crucial.",
                 category="DC", date="Dec 10, 2024", code=True)
    whole = [UNDATED_SAMPLE[0], dated, UNDATED_SAMPLE[1]]
    # Two bare title + authors pairs where the count leaves one place: a guess.
    guessed = [dated, UNDATED_SAMPLE[1], UNDATED_SAMPLE[2]]
    for path, (cards, listed) in {"/undated.html": (whole, None),
                                  "/guessed.html": (guessed, 2)}.items():
        body, content_type = rendered(card_page(cards, listed=listed), "spans")
        site.routes[path] = (200, {"Content-Type": content_type}, body)
    result = crawl_profiles(tmp_path, urls=",".join(site.url(p) for p in ("/undated.html",
                                                                          "/guessed.html")))
    works = {url: [w["title"] for w in result.kind("work") if w["researcher_url"] == url]
             for url in (site.url("/undated.html"), site.url("/guessed.html"))}
    assert works[site.url("/undated.html")] == [c.title for c in whole]
    assert len(works[site.url("/guessed.html")]) == 2
    assert result.stats["profiles/ambiguous"] == 1
    assert "profiles/truncated" not in result.stats
    assert f"{site.url('/guessed.html')}: listings split by a guess (ambiguous card split" \
        in result.log


def test_robots_txt_is_obeyed(site, tmp_path) -> None:
    result = crawl_profiles(tmp_path, urls=site.url("/private/staff.html"))
    assert "/private/staff.html" not in site.requests
    assert result.stats["robotstxt/forbidden"] == 1
    assert result.items == []


def test_callbacks_return_no_value() -> None:
    # WARN_ON_GENERATOR_RETURN_VALUE is off (crawler/settings.py): this is its check, once.
    from scrapy.utils.misc import is_generator_with_return_value

    from crawler.spiders.profiles import ProfilesSpider

    assert not is_generator_with_return_value(ProfilesSpider.parse)



class SchedulerWatch:
    """An extension that records the scheduler's length each time a request is queued."""

    lengths: ClassVar[list[int]] = []

    def __init__(self, crawler) -> None:
        self.crawler = crawler
        crawler.signals.connect(self.scheduled, signal=signals.request_scheduled)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def scheduled(self, request, spider) -> None:
        self.lengths.append(len(self.crawler.engine.scheduler))


def test_start_requests_wait_for_room_in_the_engine(site, tmp_path) -> None:
    # A long URL list must not sit in the scheduler as Request objects all at once.
    url_file = tmp_path / "urls.txt"
    url_file.write_text("\n".join(site.url(f"/bzpeer/researchers/chao-jin/?copy={n}")
                                  for n in range(120)))
    SchedulerWatch.lengths = []
    result = crawl_profiles(tmp_path, {"CONCURRENT_REQUESTS": "4",
                                       "EXTENSIONS": {f"{__name__}.SchedulerWatch": 0}},
                            url_file=str(url_file))
    assert result.stats["profiles/parsed"] == 120
    assert len(SchedulerWatch.lengths) == 120 and max(SchedulerWatch.lengths) <= 4
