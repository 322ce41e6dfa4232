"""The same person on both sites: linked on researcher pages only with a name and a shared work.

The fixture pages hold no one person on both layouts, so the module adds a few
profiles to its own indexed copy: Haibin Lin's papercards profile listing ResNeSt
(the true pair), Jian Jiao written family name first on papercards listing m3BERT,
a papercards Chao Jin with no work in common with bzpeer's, a papercards "H. Lin"
listing ResNeSt (initials only) and a second bzpeer Yinmin Zhong listing ReLibra.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scholarindex.core.names import same_full_name
from scholarindex.search.query import namesakes_body, shared_works_body
from scholarindex.webui.cross_site import linked, namesakes
from tests.support.search_site import FixtureSite, add_profiles, tags

RESNEST = "ResNeSt: split attention networks"  # Haibin Lin's ResNeSt, as another site prints it
M3BERT = "m3BERT: A Modern, Multi-lingual, Matryoshka Bidirectional Encoder"
RELIBRA = "ReLibra: Routing-Replay-Guided Load Balancing for MoE Training in Reinforcement Learning"

ADDED = {  # key in site.researchers -> (name, profile URL, source, titles listed)
    "pc Haibin Lin": ("Haibin Lin", "https://papercards.example/authors/haibin-lin.html",
                      "papercards", [RESNEST, "Mixture of Experts at Scale: A Papercards Paper"]),
    "pc JIAO Jian": ("JIAO Jian", "https://papercards.example/authors/jiao-jian.html",
                     "papercards", [M3BERT]),
    "pc Chao Jin": ("Chao Jin", "https://papercards.example/authors/chao-jin.html",
                    "papercards", ["Coral Reef Acoustics: A Namesake's Paper"]),
    "pc H. Lin": ("H. Lin", "https://papercards.example/authors/h-lin.html", "papercards",
                  [RESNEST]),
    "bz Yinmin Zhong": ("Yinmin Zhong", "https://bzpeer.example/researchers/yinmin-zhong-2/",
                        "bzpeer", [RELIBRA]),
}


@pytest.fixture(scope="module")
def linked_site(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> FixtureSite:
    """The module's fixture index plus the profiles in ``ADDED``."""
    add_profiles(site, tmp_path_factory.mktemp("cross"), ADDED)
    return site


def researcher(site: FixtureSite, rid: str) -> dict[str, Any]:
    response = site.http.get(f"/api/researchers/{rid}")
    assert response.status_code == 200, response.text
    return response.json()


# --- the name rule and the pure parts -------------------------------------------------------

@pytest.mark.parametrize(("a", "b", "same"), [
    ("Haibin Lin", "HAIBIN LIN", True),  # one spelling
    ("José Luis Peñalver", "Jose Luis Penalver", True),  # accents folded
    ("Jian Jiao", "JIAO Jian", True),  # family name first
    ("Jialiang Cheng", "Jia-Liang Cheng", True),  # one given name, hyphenated
    ("Jialiang Cheng", "Cheng, Jialiang", True),
    ("Haibin Lin", "H. Lin", False),  # an initial agrees with too many people
    ("H. Lin", "Haibin Lin", False),
    ("Haibin Lin", "Haoran Lin", False),
    ("Haibin Lin", "Lin", False),  # a bare surname
    ("Chao Jin", "Chao Jiang", False),
])
def test_same_full_name_needs_the_given_name_written_out(a, b, same):
    assert same_full_name(a, b) is same
    assert same_full_name(b, a) is same


def test_only_other_sites_full_names_become_candidates_and_only_shared_works_link():
    hits = {"hits": {"hits": [
        {"_id": "pc1", "_source": {"id": "pc1", "name": "Haibin Lin", "source": "papercards",
                                   "url": "javascript:alert(1)"}},
        {"_id": "pc2", "_source": {"id": "pc2", "name": "H. Lin", "source": "papercards"}},
        {"_id": "bz2", "_source": {"id": "bz2", "name": "Haibin Lin", "source": "bzpeer"}},
        {"_id": "bz1", "_source": {"id": "bz1", "name": "Haibin Lin", "source": "bzpeer"}},
        {"_id": "xx", "_source": {"id": "xx", "name": "Haibin Lin", "source": None}},
        {"_id": "pc3", "_source": {"id": "pc3", "name": "Haibin Lin", "source": "papercards"}},
    ]}}
    candidates = namesakes("bz1", "Haibin Lin", "bzpeer", hits)
    assert [c["id"] for c in candidates] == ["pc1", "pc3"]
    shared = {"aggregations": {"shared": {"buckets": [{"key": "pc1", "doc_count": 2}]}}}
    links = linked(candidates, shared)
    assert [(a.id, a.source, a.shared_works, a.url) for a in links] == [
        ("pc1", "papercards", 2, None)]  # pc3 shares no work; a script URL is no link
    assert linked(candidates, {"aggregations": {"shared": {"buckets": []}}}) == []


def test_query_bodies_ask_for_other_sites_and_count_only_the_candidates():
    body = namesakes_body("Haibin Lin", "bzpeer")
    assert body["query"]["bool"]["must_not"] == [{"term": {"source": "bzpeer"}}]
    assert body["query"]["bool"]["must"] == [{"match": {"name": {"query": "Haibin Lin"}}}]
    counted = shared_works_body("bz1", ["pc3", "pc1", "pc1"])
    assert counted["query"] == {"term": {"profiles.id": "bz1"}}
    assert counted["aggs"]["shared"]["terms"]["include"] == ["pc1", "pc3"]
    assert counted["size"] == 0


# --- over the indexed fixture pages ----------------------------------------------------------

def test_the_same_person_on_both_sites_is_linked_both_ways(linked_site):
    site = linked_site
    bz, pc = site.researchers["Haibin Lin"], site.researchers["pc Haibin Lin"]
    mine = researcher(site, bz)
    assert mine["also_on"] == [{"id": pc, "name": "Haibin Lin", "source": "papercards",
                                "url": ADDED["pc Haibin Lin"][1], "shared_works": 1}]
    theirs = researcher(site, pc)
    assert theirs["also_on"] == [{"id": bz, "name": "Haibin Lin", "source": "bzpeer",
                                  "url": mine["url"], "shared_works": 1}]
    # Both still two profiles: their own pages, works and counts.
    assert mine["works_total"] == 8 and theirs["works_total"] == 2
    # Priya Raghunathan lists ResNeSt too: a co-author, not the same person.
    coauthors = {c["name"] for c in mine["coauthors"]}
    assert {"Priya Raghunathan", "Haibin Lin", "H. Lin"} <= coauthors


def test_a_name_written_family_name_first_is_the_same_name(linked_site):
    site = linked_site
    bz, pc = site.researchers["Jian Jiao"], site.researchers["pc JIAO Jian"]
    assert [a["id"] for a in researcher(site, bz)["also_on"]] == [pc]
    assert [a["id"] for a in researcher(site, pc)["also_on"]] == [bz]


def test_a_namesake_without_a_shared_work_is_not_linked(linked_site):
    site = linked_site
    assert researcher(site, site.researchers["Chao Jin"])["also_on"] == []
    assert researcher(site, site.researchers["pc Chao Jin"])["also_on"] == []


def test_initials_alone_do_not_link_even_with_a_shared_work(linked_site):
    site = linked_site
    initials = site.researchers["pc H. Lin"]
    assert initials not in {a["id"] for a in researcher(site, site.researchers["Haibin Lin"])
                            ["also_on"]}
    assert researcher(site, initials)["also_on"] == []


def test_two_profiles_on_one_site_are_not_linked(linked_site):
    site = linked_site
    first, second = site.researchers["Yinmin Zhong"], site.researchers["bz Yinmin Zhong"]
    body = researcher(site, first)
    assert body["also_on"] == []
    assert second in {c["id"] for c in body["coauthors"]}  # they do share ReLibra
    assert researcher(site, second)["also_on"] == []


def test_researcher_page_says_also_on_with_a_link(linked_site):
    site = linked_site
    bz, pc = site.researchers["Haibin Lin"], site.researchers["pc Haibin Lin"]
    html = site.http.get(f"/researchers/{bz}").text
    assert f'Also on papercards: <a href="/researchers/{pc}">Haibin Lin</a>' in html
    assert "(1 shared work)" in html
    back = site.http.get(f"/researchers/{pc}").text
    assert f'Also on bzpeer: <a href="/researchers/{bz}">Haibin Lin</a>' in back
    assert len(tags(back).find("ul")) >= 1
    chao = site.http.get(f"/researchers/{site.researchers['Chao Jin']}").text
    assert "Also on" not in chao


def test_profile_names_are_escaped_in_the_link(linked_site, tmp_path: Path):
    site = linked_site
    name = "Kadri <Tamm>"  # folds to Kadri Tamm's name key: the same spelling
    url = "https://papercards.example/authors/kadri-tamm-markup.html"
    title = "Is Network the Bottleneck of Distributed Inference?"  # Kadri Tamm's own work
    add_profiles(site, tmp_path, {"pc Kadri": (name, url, "papercards", [title])})
    kadri = site.researchers["Kadri Tamm"]
    assert [a["name"] for a in researcher(site, kadri)["also_on"]] == [name]  # JSON: raw text
    html = site.http.get(f"/researchers/{kadri}").text
    link = f'Also on papercards: <a href="/researchers/{site.researchers["pc Kadri"]}">'
    assert f"{link}Kadri &lt;Tamm&gt;</a>" in html
    assert "<Tamm>" not in html
