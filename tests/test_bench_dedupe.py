"""The work-resolution benchmark (bench/er, bench/dedupe) keeps working and counts honestly.

The builder's tests use records made here; the rest read the labelled data sets
(``ER_DATA_DIR``, default ``../shared/data/er``) and skip when they are absent.
"""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import combinations
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bench.er.data import DataSet, Record, available, load, within_cluster_pairs
from bench.er.evaluate import crawl_offline, distractors, evaluate
from bench.er.evaluate import main as evaluate_main
from bench.er.noise import mojibake, scholar_name, typo, with_noise
from bench.er.scoreboard import Row, row, table
from bench.er.site import (
    EITHER,
    LAYOUTS,
    Page,
    Site,
    build_site,
    build_sites,
    placement,
    profile_name,
)
from bench.generate import CRAWL_DATE, LAYOUT_A
from crawler.extract import ProfilePage, parse_profile
from crawler.extract.lines import page_text
from scholarindex.core.identity import work_id
from scholarindex.core.resolution import Atom

ROOT = Path(__file__).resolve().parent.parent
BIB_SETS = ("bib-respiratory", "bib-cytology")
needs_bib = pytest.mark.skipif(
    not all(map(available, BIB_SETS)),
    reason="bib-dedupe's sets not found (bib-dedupe/respiratory, bib-dedupe/cytology_screening): "
           "set ER_DATA_DIR (default ../shared/data/er from the repository root)")
needs_dblp_acm = pytest.mark.skipif(
    not available("dblp-acm"),
    reason="DBLP-ACM not found: set ER_DATA_DIR (default ../shared/data/er from the repository "
           "root) to run the work-resolution benchmark's tests")


def _record(source: str, rid: str, title: str, authors: str, year: int | None) -> Record:
    names = tuple(n.strip() for n in authors.split(",") if n.strip())
    return Record(source, rid, title, names, authors, "SIGMOD Record", year)


def _parse(site: Site, page: Page) -> ProfilePage:
    return parse_profile("http://er.invalid" + page.path, site.render(page).encode("utf-8"),
                         "text/html; charset=utf-8", CRAWL_DATE)


def test_cards_show_the_data_verbatim_one_profile_per_first_author() -> None:
    records = [
        _record("ACM", "1", "XML-based information mediation with MIX",
                "Chaitan Baru, Bertram Lud&#228;scher", 1999),
        _record("ACM", "2", "Immunogold labelling in  SjÃ¶strÃ¶m's lab",
                "Chaitan Baru, H SjÃ¶strÃ¶m", 2001),
        _record("ACM", "3", "Editor's Notes", "", 2002),
        _record("ACM", "4", "A paper without a year", "Ann Other, Chaitan Baru", None),
    ]
    site = build_site("ACM", records)
    assert [(p.owner, [r.id for r in p.records]) for p in site.pages] == [
        ("Chaitan Baru", ["1", "2"]), ("ACM", ["3"]), ("Ann Other", ["4"])]
    page = _parse(site, site.pages[0])
    assert page.layout == "papercards" and page.researcher is not None
    assert page.researcher.name == "Chaitan Baru"
    first, second = page.works[:2]
    # Entities and mojibake are printed as the data spells them, and read back so.
    assert first.title == "XML-based information mediation with MIX"
    assert first.year == 1999
    assert " ".join(second.title.split()) == "Immunogold labelling in SjÃ¶strÃ¶m's lab"
    assert second.authors == ["Chaitan Baru", "H SjÃ¶strÃ¶m"]
    assert "Lud&amp;#228;scher" in site.render(site.pages[0])
    # The card without a year has an empty meta line (what such a site prints).
    html = site.render(site.pages[2])
    assert html.count('<div class="meta"></div>') == 1
    assert "A paper without a year" in page_text(html.encode("utf-8"), "text/html").lines
    owner = _parse(site, site.pages[1])
    assert owner.researcher is not None and owner.researcher.name == "ACM"


def test_dblp_profiles_print_type_year_and_venue_but_no_authors() -> None:
    records = [_record("DBLP", "conf/x/A99", "Semantic Integration of Models", "D. Scott Mackay",
                       1999),
               _record("DBLP", "conf/x/B00", "Another Paper", "D. Scott Mackay, Ann Other", 2000)]
    site = build_site("DBLP", records)
    assert len(site.pages) == 1
    page = _parse(site, site.pages[0])
    assert page.layout == "bzpeer"
    assert [(w.title, w.year, w.venue, w.type, w.authors) for w in page.works] == [
        ("Semantic Integration of Models", 1999, "SIGMOD Record", "paper", None),
        ("Another Paper", 2000, "SIGMOD Record", "paper", None)]


def _bib_record(rid: str, title: str, authors: str, year: int | None, journal: str) -> Record:
    names = tuple(n.strip() for n in authors.split(" and ") if n.strip())
    return Record("Respiratory", rid, title, names, authors, journal, year, "article")


@pytest.mark.parametrize(("printed", "shown"), [
    ("Zuna, R E", "R E Zuna"), ("Ziegler, T. R.", "T. R. Ziegler"), ("Le Caer, H.", "H. Le Caer"),
    ("Group, ALTS", "ALTS Group"), ("Plato", "Plato"), ("a, b, c", "a, b, c")])
def test_a_profile_heads_a_surname_first_name_given_name_first(printed: str, shown: str) -> None:
    assert profile_name(printed) == shown


def test_a_single_table_goes_on_its_authors_profiles_on_both_layouts() -> None:
    assert LAYOUTS["Respiratory"] == LAYOUTS["Cytology"] == EITHER
    records = [_bib_record(f"id_{n:07d}", f"Pleural effusion study number {n}",
                           "Zuna, R E and Wang, S S and Schiffman, M", 2000 + n % 12, "Cancer")
               for n in range(60)]
    records.append(_bib_record("id_untitled", " ", "Zuna, R E", 2010, "Cancer"))
    records.append(_bib_record("id_nobody", "A paper of no author", "", 2010, "Cancer"))
    data = DataSet("bib-x", {"Respiratory": records}, set())
    sites = build_sites(data)
    assert [(s.name, s.layout) for s in sites] == [("Respiratory-bzpeer", "bzpeer"),
                                                   ("Respiratory-papercards", "papercards")]
    on_page = {r.key: (site.layout, page.owner) for site in sites for page in site.pages
               for r in page.records}
    # Every titled record once, where its key draws it; the untitled one nowhere.
    assert set(on_page) == {r.key for r in records} - {"Respiratory:id_untitled"}
    assert all(on_page[r.key] == placement(r) for r in records if r.key in on_page)
    assert build_sites(data)[0].pages == sites[0].pages  # the same every run
    layouts = [layout for layout, _ in on_page.values()]
    assert 15 < layouts.count("bzpeer") < 45  # both layouts read, about half each
    assert {owner for _, owner in on_page.values()} == {"R E Zuna", "S S Wang", "M Schiffman",
                                                       "Respiratory"}
    assert on_page["Respiratory:id_nobody"][1] == "Respiratory"


def test_single_table_records_print_as_exports_print_them() -> None:
    dated = _bib_record("id_1", "Empyema thoracis", "Ahmed, A. E. H. and Yacoub, T. E.", 2010,
                        "")
    card = _bib_record("id_2", "Achalasia in adults", "Stavropoulos, S. N. and Modayil, R.",
                       2013, "Gastrointestinal Endoscopy Clinics")
    layout_a = Site("R-bzpeer", "bzpeer", [Page("/bzpeer/researchers/a.html", "A. E. H. Ahmed",
                                                [dated])])
    layout_b = Site("R-papercards", "papercards", [Page("/papercards/authors/s.html",
                                                        "S. N. Stavropoulos", [card])])
    lines = page_text(layout_a.render(layout_a.pages[0]).encode("utf-8"), "text/html").lines
    assert lines[lines.index("Empyema thoracis") - 1] == "article2010"  # no journal: none printed
    page = _parse(layout_b, layout_b.pages[0])
    assert [(w.title, w.year, w.authors) for w in page.works] == [
        ("Achalasia in adults", 2013, ["Stavropoulos, S. N.", "Modayil, R."])]
    html = layout_b.render(layout_b.pages[0])
    assert "Stavropoulos, S. N. and Modayil, R.</div>" in html  # the author line verbatim


@needs_bib
@pytest.mark.parametrize(("name", "records", "pairs"), [("bib-respiratory", 1988, 509),
                                                         ("bib-cytology", 1856, 909)])
def test_bib_dedupe_readers_give_the_records_and_the_clusters_pairs(name: str, records: int,
                                                                   pairs: int) -> None:
    data = load(name)
    assert len(data.records) == records and len(data.gold) == pairs  # as its SOURCE.txt says
    assert not data.cross_source and len(data.tables) == 1
    keys = {r.key for r in data.records}
    assert len(keys) == records and all(a in keys and b in keys for a, b in data.gold)
    assert {r.entry_type for r in data.records} == {"article"}
    several = next(r for r in data.records if " and " in r.authors_text)
    assert several.authors == tuple(several.authors_text.split(" and "))
    assert all("," in name for name in several.authors)  # "Surname, Given" kept whole
    small = load(name, limit=300)
    assert len(small.records) == 300 and small.gold == {
        (a, b) for a, b in data.gold if a in {r.key for r in small.records}
        and b in {r.key for r in small.records}}


@needs_bib
@needs_dblp_acm
def test_the_offline_scoreboard_prints_one_row_a_set(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from bench.er.scoreboard import main as scoreboard
    out = tmp_path / "board.json"
    assert scoreboard(["--data", "dblp-acm,bib-respiratory", "--limit", "100",
                       "--json", str(out)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert [r.split(" | ")[0] for r in rows[1:]] == ["| dblp-acm", "| bib-respiratory"]
    saved = json.loads(out.read_text("utf-8"))
    assert [r["records"] for r in saved["rows"]] == [200, 100] and saved["limit"] == 100
    assert all(r["placed"] == r["read"] + r["lost"] for r in saved["rows"])


def test_evaluate_all_takes_only_the_scoreboards_options() -> None:
    with pytest.raises(SystemExit) as refused:
        evaluate_main(["--all", "--why"])
    assert refused.value.code == 2


@needs_bib
def test_bib_dedupe_sets_run_offline_scored_over_all_records() -> None:
    result = evaluate(load("bib-cytology", limit=200))
    assert result["scored_pairs"] == "all" and result["records"] == 200
    assert result["listings_shown"] == 200  # every record has a title: all placed
    assert (result["records_mapped"] + result["records_lost_by_parser"]
            == result["listings_shown"])
    assert 0 < result["full"]["f1"] <= 1 and result["exact_title"]["gold"] == result["gold_pairs"]


def test_a_scoreboard_row_counts_what_was_placed_read_and_lost() -> None:
    result = {"data": "cora", "records": 1295, "gold_pairs": 17184, "listings_shown": 1290,
              "records_mapped": 1286, "exact_title": {"f1": 0.7665},
              "index": {"precision": 0.89, "recall": 0.776, "f1": 0.8295}}
    board = row(result, "index", 12.34)
    assert board == Row("cora", 1295, 17184, 0.89, 0.776, 0.8295, 0.7665, 1290, 1286, 12.3)
    assert board.lost == 4 and board.read_share == 1286 / 1290
    lines = table([board]).splitlines()
    assert len(lines) == 3 and lines[0].count("|") == lines[1].count("|") == lines[2].count("|")
    assert lines[2] == ("| cora | 1,295 (17,184) | 0.8900 | 0.7760 | 0.8295 | 0.7665 | 1,290 | "
                        "1,286 | 4 | 0.9969 | 12.3 |")


def test_layout_a_prints_any_venue_whole_and_none_as_exports_do() -> None:
    """A record without a venue prints ``paper<year>``; a long venue, or one that starts with
    a digit, prints whole; every table can be shown as layout A (Cora's venues)."""
    long_venue = ("Pediatric Nephrology.Conference: 15th Congress of the International "
                  "Pediatric Nephrology Association, IPNA 2010 New York, NY United States.")
    records = [Record("Cora", str(n), title, ("Ann Other",), "Ann Other", venue, year)
               for n, (title, venue, year) in enumerate([
                   ("No venue printed", "", 2010), ("A long venue", long_venue, 2010),
                   ("A digit first", "3 Biotech", 2009), ("Machine learning", "machine learning,",
                                                          1995)])]
    site = build_site("Cora", records, LAYOUT_A)
    assert site.layout == LAYOUT_A
    html = site.render(site.pages[0])
    assert "paper2010" in page_text(html.encode("utf-8"), "text/html").lines
    page = _parse(site, site.pages[0])
    assert [(w.title, w.year, w.venue) for w in page.works] == [
        ("No venue printed", 2010, None), ("A long venue", 2010, long_venue),
        ("A digit first", 2009, "3 Biotech"), ("Machine learning", 1995, "machine learning,")]
    assert page.problems == []


def test_gold_of_a_single_table_is_every_pair_within_its_clusters() -> None:
    assert within_cluster_pairs([("a", "b"), ("b", "c"), ("x", "y")]) == {
        ("a", "b"), ("a", "c"), ("b", "c"), ("x", "y")}


@pytest.mark.parametrize(("name", "printed"), [
    ("Jeffrey D. Ullman", "JD Ullman"), ("H. V. Jagadish", "HV Jagadish"),
    ("Wil M. P. van der Aalst", "WMP van der Aalst"), ("Hector Garcia-Molina", "H Garcia-Molina"),
    ("Ullman", "Ullman")])
def test_scholar_noise_prints_names_as_initials_and_surname(name: str, printed: str) -> None:
    assert scholar_name(name) == printed


def test_noise_rewrites_the_second_table_only_and_keeps_the_gold() -> None:
    data = DataSet("x", {"DBLP": [_record("DBLP", "1", "T", "Jim Gray", 1999)],
                         "ACM": [_record("ACM", str(n), "T", "Jim Gray", 1999)
                                 for n in range(200)]}, {("ACM:1", "DBLP:1")})
    noisy = with_noise(with_noise(data, "scholar-names"), "no-year")
    assert noisy.tables["DBLP"] == data.tables["DBLP"] and noisy.gold == data.gold
    assert {r.authors for r in noisy.tables["ACM"]} == {("J Gray",)}
    undated = sum(r.year is None for r in noisy.tables["ACM"])
    assert 60 < undated < 140  # about half, the same records every run
    assert with_noise(data, "no-year") == with_noise(data, "no-year")
    long = _record("ACM", "2", "A Title of Rather More Than Fifty Characters, Cut Here", "J", 1)
    cut = with_noise(DataSet("x", {"DBLP": [], "ACM": [long]}, set()), "cut-titles")
    assert cut.tables["ACM"][0].title == "A Title of Rather More Than Fifty Characters, Cut…"
    one = DataSet("x", {"DBLP": [], "ACM": [_record("ACM", "3", "Title", "A B, C D", 1)]}, set())
    assert with_noise(one, "glued-authors").tables["ACM"][0].title == "A B, C D. Title"
    assert with_noise(one, "glued-venue").tables["ACM"][0].title == "Title. In SIGMOD Record"
    assert mojibake("Sj&#246;str&#246;m’s") == "SjÃ¶strÃ¶mâ€™s"


@pytest.mark.parametrize(("draw", "typed"), [(0, "lcoking"), (1, "lokcing"), (7, "locing"),
                                             (14, "lockinng")])
def test_a_typo_swaps_drops_or_doubles_one_letter_never_the_first(draw: int, typed: str
                                                                  ) -> None:
    assert typo("locking", draw) == typed


def test_year_off_noise_moves_a_fifth_of_the_years_by_one() -> None:
    records = [_record("ACM", str(n), "T", "Jim Gray", 1999) for n in range(200)]
    records.append(_record("ACM", "undated", "T", "Jim Gray", None))
    noisy = with_noise(DataSet("x", {"DBLP": [], "ACM": records}, set()), "year-off")
    years = [r.year for r in noisy.tables["ACM"]]
    assert set(years) == {1998, 1999, 2000, None} and years[-1] is None
    assert 20 < sum(y != 1999 for y in years[:-1]) < 60


def test_typos_noise_misspells_one_long_word_of_each_title() -> None:
    records = [_record("ACM", str(n), "Altruistic Locking in SQL", "Jim Gray", 1999)
               for n in range(50)]
    noisy = with_noise(DataSet("x", {"DBLP": [], "ACM": records}, set()), "typos")
    for record in noisy.tables["ACM"]:
        words = record.title.split()
        assert words[2:] == ["in", "SQL"] and words[:2] != ["Altruistic", "Locking"]
        assert sum(a != b for a, b in zip(words[:2], ["Altruistic", "Locking"], strict=True)) == 1


def test_duplicates_noise_adds_damaged_printings_paired_with_the_originals_partners() -> None:
    acm = [_record("ACM", str(n), "Altruistic Locking in Distributed Databases", "Jim Gray",
                   1999) for n in range(100)]
    gold = {("ACM:7", "DBLP:1")}
    data = DataSet("x", {"DBLP": [_record("DBLP", "1", "T", "Jim Gray", 1999)], "ACM": acm}, gold)
    noisy = with_noise(data, "duplicates")
    copies = [r for r in noisy.tables["ACM"] if "~" in r.id]
    assert 30 < len(copies) < 120  # half the records, one or two printings each
    assert noisy.tables["DBLP"] == data.tables["DBLP"]
    for at, record in enumerate(noisy.tables["ACM"]):  # right after their original
        if "~" in record.id:
            assert noisy.tables["ACM"][at - 1].id.split("~")[0] == record.id.split("~")[0]
    sevens = {r.key for r in copies if r.id.startswith("7~")}
    assert noisy.gold == gold | {(key, "DBLP:1") for key in sevens}
    assert with_noise(data, "duplicates") == noisy


@pytest.mark.skipif(not available("dblp-scholar"), reason="DBLP-Scholar not found: set "
                    "ER_DATA_DIR (default ../shared/data/er from the repository root)")
def test_dblp_scholar_runs_like_every_development_set(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert evaluate_main(["--data", "dblp-scholar", "--limit", "200", "--why"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dblp-scholar: 400 records") and "resolution" in out


@needs_dblp_acm
def test_why_gives_a_reason_for_every_missed_and_wrong_pair() -> None:
    result = evaluate(load("dblp-acm"), why=True)
    full = result["full"]
    assert result["why"]["missed"] and result["why"]["wrong"]  # the full tables have both
    assert sum(result["why"]["missed"].values()) == full["gold"] - full["true_positives"]
    assert sum(result["why"]["wrong"].values()) == full["predicted"] - full["true_positives"]
    assert all(reason for counts in result["why"].values() for reason in counts)


def test_distractors_draw_their_titles_from_the_data_sets_words() -> None:
    atoms = [Atom("a", ("Altruistic Locking in Distributed Databases",), (), False, ("Jo Li",)),
             Atom("b", ("Query Processing in Databases",), (), False, ("Al Wu",)),
             Atom("c", ("Altruistic Lokcing",), (), False, ("Al Wu",))]
    crowd = distractors(atoms, 50)
    assert len(crowd) == 50 and crowd == distractors(atoms, 50)
    # Words printed twice or more only: "Lokcing", printed once, is likelier a typo.
    assert set().union(*(a.titles[0].split() for a in crowd)) == {"Altruistic", "in",
                                                                  "Databases"}
    assert {len(a.titles[0].split()) for a in crowd} <= {2, 4, 5}
    assert len({a.work_id for a in crowd}) == 50 and not {"a", "b"} & {a.work_id for a in crowd}


@needs_dblp_acm
def test_blocking_among_distractors_is_measured_at_the_real_cap() -> None:
    result = evaluate(load("dblp-acm", limit=300), "exact", distract=3000)
    crowded, alone = result["blocking_with_distractors"], result["blocking"]
    assert crowded["distractors"] == 3000 and crowded["gold"] == alone["gold"]
    assert crowded["atom_pairs"] > alone["atom_pairs"]
    assert 0 < crowded["pair_completeness"] <= alone["pair_completeness"]


@needs_dblp_acm
def test_readers_decode_each_file_and_keep_its_text() -> None:
    data = load("dblp-acm")
    assert {k: len(v) for k, v in data.tables.items()} == {"DBLP": 2616, "ACM": 2294}
    keys = {r.key for r in data.records}
    assert all(a in keys and b in keys for a, b in data.gold)
    titles = " ".join(r.title + " " + r.authors_text for r in data.records)
    assert "&#" in titles  # ACM's entities stay as they are
    assert "\ufffd" not in titles and "Ã" not in titles  # latin-1 decoded as latin-1
    assert any(not r.isascii() for r in titles.split())


def _independent_exact_title(data: DataSet) -> tuple[int, int]:
    """(predicted cross-table pairs, true ones): every pair of parsed listings compared."""
    crawled = crawl_offline(data)
    record_work: dict[str, str] = {}
    for item in crawled.items:
        for key in crawled.matched.record_keys(item["researcher_url"], item["work_id"]):
            record_work[key] = work_id(item["title"])
    predicted = true = 0
    for a, b in combinations(sorted(record_work), 2):
        if a.split(":")[0] != b.split(":")[0] and record_work[a] == record_work[b]:
            predicted += 1
            true += (a, b) in data.gold
    return predicted, true


@needs_dblp_acm
def test_offline_evaluator_counts_as_an_independent_pairwise_count() -> None:
    data = load("dblp-acm", limit=400)
    result = evaluate(data, "exact")
    assert result["records"] == 800 and result["gold_pairs"] == len(data.gold) > 0
    assert result["listings_shown"] == 800
    assert (result["records_mapped"] + result["records_lost_by_parser"]
            == result["listings_shown"])
    assert result["listings_parsed"] == result["records_mapped"] + result["listings_unmapped"]
    predicted, true = _independent_exact_title(data)
    baseline = result["exact_title"]
    assert (baseline["predicted"], baseline["true_positives"]) == (predicted, true)
    assert baseline["precision"] == round(true / predicted, 4)
    assert baseline["recall"] == round(true / len(data.gold), 4)
    assert len(build_sites(data)) == 2


@needs_dblp_acm
def test_end_to_end_bench_scores_the_index_it_crawled(tmp_path: Path) -> None:
    out, work = tmp_path / "dedupe.json", tmp_path / "work"
    # A single-table set beside it when its data is there: both layouts from one table.
    sets = ["dblp-acm", *(["bib-cytology"] if available("bib-cytology") else [])]
    proc = subprocess.run(
        [sys.executable, "-m", "bench.dedupe", "--data", ",".join(sets), "--limit", "150",
         "--out", str(out), "--workdir", str(work)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    saved = json.loads(out.read_text("utf-8"))
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ")]
    assert [r.split(" | ")[0] for r in rows[1:]] == [f"| {name}" for name in sets]
    for name in sets:
        assert saved["data_sets"][name]["checks_failed"] == []
    assert [r["data"] for r in saved["scoreboard"]] == sets
    assert all(r["placed"] == r["read"] + r["lost"] > 0 for r in saved["scoreboard"])
    result = saved["data_sets"]["dblp-acm"]
    assert result["pages_parsed"] == result["pages"] > 0 and result["pages_per_s"] > 0
    assert result["records"] == 300
    # The baseline from the crawl's items, counted again here from the exported items and
    # the listing map, comparing every pair.
    data = load("dblp-acm", limit=150)
    records = {r.key: r for r in data.records}
    listing_map = json.loads((work / "dblp-acm" / "sites" / "listings.json").read_text("utf-8"))
    shown = {path: [records[k] for k in keys]
             for site in listing_map.values() for path, keys in site.items()}
    items = [json.loads(line) for line in
             (work / "dblp-acm" / "items.jsonl").read_text("utf-8").splitlines()]
    record_work: dict[str, str] = {}
    for item in (i for i in items if i["kind"] == "work"):
        path = urlsplit(item["researcher_url"]).path
        for record in shown[path]:
            if (" ".join(record.title.split()) == " ".join(item["title"].split())
                    and record.year == item["year"]):
                record_work[record.key] = work_id(item["title"])
    predicted = true = 0
    for a, b in combinations(sorted(record_work), 2):
        if a.split(":")[0] != b.split(":")[0] and record_work[a] == record_work[b]:
            predicted += 1
            true += (a, b) in data.gold
    baseline = result["exact_title"]
    assert (baseline["predicted"], baseline["true_positives"]) == (predicted, true)
    assert baseline["gold"] == len(data.gold)
    if not result["resolution_pass"]["ran"]:  # the index holds one document per work_id
        assert result["index"] == baseline
        assert result["work_documents"] == result["atoms"]


def test_each_data_set_has_its_own_prefix_on_the_cluster_and_leaves_nothing() -> None:
    from bench.cluster import opensearch_process
    from bench.dedupe import data_set_index, delete_indices
    from scholarindex.indexing.client import build_client

    with opensearch_process(False) as (cluster, _):
        one, other = data_set_index(cluster, "bib-cytology"), data_set_index(cluster, "cora")
        assert one.prefix == f"{cluster.prefix}er_bib_cytology_" and one.url == cluster.url
        client = build_client(cluster)
        for index in (one, other):
            client.indices.create(index=f"{index.prefix}works-v1")
            client.indices.create(index=f"{index.prefix}researchers-v1")
        delete_indices(one)
        left = set(client.indices.get(index=f"{cluster.prefix}er_*", allow_no_indices=True))
        assert left == {f"{other.prefix}works-v1", f"{other.prefix}researchers-v1"}
        delete_indices(other)


@needs_dblp_acm
def test_the_noise_table_prints_a_row_per_printing(
        capsys: pytest.CaptureFixture[str]) -> None:
    from bench.er.noise_table import main as noise_table
    assert noise_table(["--limit", "150", "--row", "nothing changed",
                        "--row", "typos, cut-titles"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows[1:]] == ["| nothing changed",
                                                           "| typos, cut-titles"]
    exact, resolved = ([[float(x) for x in row.split(" | ")[column].split()[:5:2]]
                        for row in rows[1:]] for column in (1, 2))
    assert all(0 <= x <= 1 for row in exact + resolved for x in row)
    assert exact[1][1] < exact[0][1] / 2  # a typo in every title: exact titles barely meet
    assert resolved[1][1] > exact[1][1]
