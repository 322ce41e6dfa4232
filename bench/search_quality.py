"""Search quality on real noisy queries: the DBLP side indexed, the ACM side's titles asked.

DBLP-ACM (a public entity-resolution benchmark) prints the same 2,224 papers in two
catalogues, each its own way. The DBLP records are crawled as profile pages
(``crawl_dblp``: ``bench.er.site``'s pages, ``scrapy crawl profiles``); the ACM
record of each matched pair is then the query, and the right answer is the work
holding the DBLP record. Three seeded sets of the same size:

* ``exact``: the ACM title as printed (its HTML entities, its extra or missing words);
* ``typo``: the same title with one edit (substitution, insertion, deletion or
  swapped neighbours, never the first letter) in its longest word;
* ``owner``: the ACM first author's surname and three of the title's words (in title
  order), for pairs whose first author is the DBLP profile's owner.

Each set prints MRR@10 (1/rank of the right work within the first ten hits, else 0,
averaged) and recall@1, and which match level answered (``scholarindex.search.matching``).

The data are read at run time by ``bench.er.data`` from ``ER_DATA_DIR`` (default
``../shared/data/er`` relative to the repository root), never copied into the
repository.
"""

from __future__ import annotations

import html
import random
import string
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from opensearchpy import OpenSearch, helpers

from bench.er.data import DataSet, Record
from bench.er.site import build_site, write_sites, write_urls
from bench.run import run_crawl
from bench.serve import StaticServer
from scholarindex.core.identity import work_id
from scholarindex.core.names import parse_name
from scholarindex.core.text import words
from scholarindex.indexing.connection import OpenSearchConfig
from scholarindex.indexing.indices import alias_name

DBLP_ACM = "dblp-acm"
SET_NAMES = ("exact", "typo", "owner")
# Words too common to stand for a title in the ``owner`` set.
_STOPWORDS = frozenset(
    "a an and are as at by for from in into is it of on or the to with without via using "
    "its their our we based towards toward".split())


@dataclass(frozen=True)
class Pair:
    """The same paper in both catalogues."""

    dblp: Record
    acm: Record


@dataclass(frozen=True)
class Query:
    """One judged query: the text asked and the DBLP record whose work is the answer."""

    set: str
    text: str
    expected: Record


def pairs_of(data: DataSet) -> list[Pair]:
    """Every gold pair of DBLP-ACM as (DBLP record, ACM record), in a stable order."""
    by_key = {r.key: r for r in data.records}
    out = []
    for a, b in sorted(data.gold):
        dblp, acm = (by_key[a], by_key[b]) if a.startswith("DBLP:") else (by_key[b], by_key[a])
        if dblp.title and acm.title:
            out.append(Pair(dblp, acm))
    return out


def crawl_dblp(data: DataSet, config: OpenSearchConfig, work: Path) -> int:
    """Crawl the DBLP side as profile pages (``bench.er.site``: layout A, one profile per
    first author) with ``scrapy crawl profiles`` into ``config``'s index; returns the
    pages parsed."""
    site = build_site("DBLP", data.tables["DBLP"])
    folders = write_sites([site], work / "sites")
    with StaticServer(folders[site.name]) as server:
        urls = write_urls(site, work / "urls.txt", server.url)
        crawl = run_crawl("crawl-dblp", "profiles", urls, work, {
            "INDEX_ENABLED": "true", "ARXIV_ENABLED": "false", "OPENSEARCH_URL": config.url,
            "INDEX_PREFIX": config.prefix, "STATE_DIR": str(work / "state"),
            "INDEX_DEADLETTER_PATH": str(work / "deadletter.jsonl"),
        }, timeout=600 + len(site.pages))
    if crawl.returncode != 0:
        raise RuntimeError(f"the DBLP crawl failed (exit {crawl.returncode}): see {crawl.log}")
    return int(crawl.stat("profiles/parsed"))


def work_of(client: OpenSearch, prefix: str) -> Callable[[Record], str | None]:
    """The id of the work document holding a record's listing (by its ``work_id``)."""
    owner: dict[str, str] = {}
    for hit in helpers.scan(client, index=alias_name(prefix, "works"),
                            query={"_source": ["work_ids"]}):
        for listed in hit["_source"].get("work_ids") or ():
            owner[listed] = hit["_id"]
    return lambda record: owner.get(work_id(record.title))


def one_typo(title: str, rng: random.Random) -> str:
    """``title`` with one edit in its longest word (the first letter is left alone)."""
    tokens = title.split(" ")
    at = max(range(len(tokens)), key=lambda i: (len(_letters(tokens[i])), -i))
    word = tokens[at]
    spots = [i for i, ch in enumerate(word) if ch.isalpha()][1:]
    if not spots:
        return title
    i = rng.choice(spots)
    kind = rng.choice(("substitute", "insert", "delete", "swap"))
    letters = string.ascii_lowercase
    if kind == "substitute":
        word = word[:i] + rng.choice(letters.replace(word[i].lower(), "")) + word[i + 1:]
    elif kind == "insert":
        word = word[:i] + rng.choice(letters) + word[i:]
    elif kind == "delete":
        word = word[:i] + word[i + 1:]
    elif i + 1 < len(word) and word[i + 1] != word[i]:
        word = word[:i] + word[i + 1] + word[i] + word[i + 2:]
    else:  # nothing to swap at the end: substitute instead
        word = word[:i] + rng.choice(letters.replace(word[i].lower(), "")) + word[i + 1:]
    tokens[at] = word
    return " ".join(tokens)


def _letters(token: str) -> str:
    return "".join(ch for ch in token if ch.isalpha())


def surname(name: str) -> str | None:
    """The folded surname of a printed name (``scholarindex.core.names``'s reading)."""
    parsed = parse_name(html.unescape(name))  # ACM spells accents as entities
    return parsed.surname if parsed else None


def owner_query(pair: Pair, rng: random.Random) -> str | None:
    """The ACM first author's surname and three title words, when that author owns the
    DBLP profile (the DBLP first author); None otherwise."""
    if not pair.acm.authors or not pair.dblp.authors:
        return None
    name = surname(pair.acm.authors[0])
    if not name or name != surname(pair.dblp.authors[0]):
        return None
    content = [w for w in dict.fromkeys(words(pair.acm.title)) if w not in _STOPWORDS
               and len(w) > 1]
    if len(content) < 3:
        return None
    picked = sorted(rng.sample(range(len(content)), 3))
    printed = pair.acm.authors[0].split()[-1]  # as the other catalogue prints it
    return " ".join([printed, *(content[i] for i in picked)])


def query_sets(pairs: list[Pair], size: int = 600, seed: int = 7) -> dict[str, list[Query]]:
    """The three judged query sets, ``size`` queries each (fewer if the data has fewer)."""
    rng = random.Random(seed)
    chosen = rng.sample(pairs, min(size, len(pairs)))
    sets: dict[str, list[Query]] = {
        "exact": [Query("exact", p.acm.title, p.dblp) for p in chosen],
        "typo": [Query("typo", one_typo(p.acm.title, rng), p.dblp) for p in chosen],
    }
    owners: list[Query] = []
    for pair in rng.sample(pairs, len(pairs)):
        text = owner_query(pair, rng)
        if text is not None:
            owners.append(Query("owner", text, pair.dblp))
        if len(owners) == size:
            break
    sets["owner"] = owners
    return sets


@dataclass
class SetScore:
    """Quality of one query set."""

    name: str
    queries: int = 0
    reciprocal_ranks: float = 0.0
    at_one: int = 0
    levels: Counter[str] = field(default_factory=Counter)
    misses: list[tuple[str, str, list[str]]] = field(default_factory=list)  # (query, want, got)

    @property
    def mrr(self) -> float:
        """MRR@10."""
        return self.reciprocal_ranks / self.queries if self.queries else 0.0

    @property
    def recall_at_1(self) -> float:
        """Share of queries answered by the right work first."""
        return self.at_one / self.queries if self.queries else 0.0

    def add(self, query: Query, want: str, got: list[str], level: str,
            titles: list[str]) -> None:
        """Score one answer: ``got`` holds the hit ids in rank order."""
        self.queries += 1
        self.levels[level] += 1
        rank = got.index(want) + 1 if want in got[:10] else 0
        if rank:
            self.reciprocal_ranks += 1 / rank
        if rank == 1:
            self.at_one += 1
        else:
            self.misses.append((query.text, query.expected.title, titles[:3]))

    def line(self) -> str:
        """One printed row."""
        levels = ", ".join(f"{k} {v}" for k, v in sorted(self.levels.items()))
        return (f"{self.name:<8} n={self.queries:<4} MRR@10={self.mrr:.3f}  "
                f"recall@1={self.recall_at_1:.3f}  answered by: {levels}")


Answer = tuple[list[str], list[str], str]  # hit ids, hit titles, match level


def score(sets: Mapping[str, Iterable[Query]], expected_id: Callable[[Record], str | None],
          ask: Callable[[str], Answer]) -> list[SetScore]:
    """Ask every query and score it against the work holding its DBLP record."""
    out = []
    for name, queries in sets.items():
        result = SetScore(name)
        for query in queries:
            want = expected_id(query.expected)
            if want is None:
                continue  # the record's work is not in the index: nothing to judge
            ids, titles, level = ask(query.text)
            result.add(query, want, ids, level, titles)
        out.append(result)
    return out
