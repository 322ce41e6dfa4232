"""The labelled entity-resolution data sets, read as records and gold pairs.

    from bench.er.data import load
    data = load("dblp-acm")        # or any of DATA_SETS
    data.tables                    # {"DBLP": [Record, ...], "ACM": [...]}
    data.gold                      # {(key, key), ...}: every true pair, keys sorted

Where they are: ``ER_DATA_DIR`` (environment), default ``../shared/data/er``
relative to the repository root. Each folder has a SOURCE.txt saying where the
files come from and how their bytes are encoded; the readers decode those bytes
and change nothing else: HTML entities (``Lud&#228;scher``), mojibake
(``SjÃ¶strÃ¶m``), odd case and stray punctuation stay, because they are what a
matcher meets on real sites.

- DBLP-ACM: ``DBLP2.csv`` (latin-1) and ``ACM.csv`` (ASCII); gold = the perfect
  mapping (2,224 pairs, 1:1).
- DBLP-Scholar: ``DBLP1.csv`` (latin-1) and ``Scholar.csv`` (UTF-8, rebuilt from a
  parquet export, see its SOURCE.txt); gold = the perfect mapping (5,347 pairs, 1:n).
  The Scholar side is large (64,263 records): ``limit`` keeps quick runs quick.
- Cora: ``cora/cora.csv`` ('|'-separated, 1,295 citation strings segmented into
  fields, one table) and ``cora_gt.csv`` (id pairs). Gold = every pair within the
  clusters the pairs form (the file is already closed; closing it again is cheap
  and makes the rule independent of that). The larger ``coraLarge`` variant (1,879
  records, other fields and clusters) is not read: it is a different cut of the
  same citations, and one Cora keeps the figures comparable with the literature.
- bib-dedupe's two medical sets, ``bib-respiratory`` and ``bib-cytology``
  (``bib-dedupe/<set>/records_pre_merged.csv``, UTF-8, one table exported from
  several literature databases, so one paper appears once per database; authors
  "Surname, Given and Surname, Given"; the journal is the venue, ``ENTRYTYPE`` kept)
  and ``merged_record_ids.csv`` (one duplicate cluster a line, ids joined by ``;``;
  a record in no line is unique). Gold = every pair within a cluster.

A record's ``year`` is the year the data gives, or None (Scholar lacks it for
34,790 of 64,263 records; Cora prints it as ``1995,`` or ``(1994).``, so its first
four-digit 19xx/20xx number is read). ``authors`` is the author field split at its
separators (commas; for Cora also ``and``; for bib-dedupe ``and`` alone, each name
keeping its "Surname, Given" comma); ``authors_text`` is the field as given.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DIR = Path("..") / "shared" / "data" / "er"  # relative to the repository root
DATA_SETS = ("dblp-acm", "dblp-scholar", "cora", "bib-respiratory", "bib-cytology")

# (folder, left file, left source, left encoding, right file, right source, right encoding,
#  mapping file): the two-table data sets.
_TWO_TABLES = {
    "dblp-acm": ("dblp-acm", "DBLP2.csv", "DBLP", "latin-1", "ACM.csv", "ACM", "ascii",
                 "DBLP-ACM_perfectMapping.csv"),
    "dblp-scholar": ("dblp-scholar", "DBLP1.csv", "DBLP", "latin-1", "Scholar.csv", "Scholar",
                     "utf-8", "DBLP-Scholar_perfectMapping.csv"),
}
# name -> (folder under bib-dedupe/, source): the single-table medical exports.
_BIB = {"bib-respiratory": ("respiratory", "Respiratory"),
        "bib-cytology": ("cytology_screening", "Cytology")}
_CORA_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_COMMAS = re.compile(r"\s*,\s*")
_COMMAS_AND = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")  # Cora: "a, b, and c,"
_AND = re.compile(r"\s+and\s+")  # bib-dedupe: "Zuna, R E and Wang, S S"


class DataMissing(FileNotFoundError):
    """The data folder (or a file in it) is not there."""


@dataclass(frozen=True)
class Record:
    """One bibliographic record as the data set gives it."""

    source: str  # "DBLP", "ACM", "Scholar", "Cora"
    id: str
    title: str
    authors: tuple[str, ...]
    authors_text: str
    venue: str
    year: int | None
    entry_type: str = ""  # the export's kind ("article"); "" where the data gives none

    @property
    def key(self) -> str:
        """Unique over the data set's tables: ``"ACM:304586"``."""
        return f"{self.source}:{self.id}"


@dataclass
class DataSet:
    name: str
    tables: dict[str, list[Record]]  # source -> records, in file order
    gold: set[tuple[str, str]]  # (key, key) with key < key
    notes: list[str] = field(default_factory=list)

    @property
    def records(self) -> list[Record]:
        return [r for table in self.tables.values() for r in table]

    @property
    def cross_source(self) -> bool:
        """Two tables: only pairs across them are scored (the gold lists no others)."""
        return len(self.tables) > 1


def data_dir() -> Path:
    """``ER_DATA_DIR``, or the default relative to the repository root."""
    configured = os.environ.get("ER_DATA_DIR")
    path = Path(configured) if configured else ROOT / DEFAULT_DIR
    return path if path.is_absolute() else ROOT / path


def available(name: str) -> bool:
    try:
        _files(name)
    except DataMissing:
        return False
    return True


def load(name: str, limit: int | None = None) -> DataSet:
    """The data set ``name``; ``limit``: only the first N records of each table (and the
    gold pairs among them), for quick runs."""
    if name == "cora":
        return _cora(limit)
    if name in _BIB:
        return _bib(name, limit)
    if name not in _TWO_TABLES:
        raise ValueError(f"unknown data set {name!r}; one of {', '.join(DATA_SETS)}")
    files = _files(name)
    _, _, left_source, left_enc, _, right_source, right_enc, _ = _TWO_TABLES[name]
    left = _read_table(files[0], left_source, left_enc)[:limit]
    right = _read_table(files[1], right_source, right_enc)[:limit]
    keys = {r.key for r in left} | {r.key for r in right}
    gold = set()
    with files[2].open(encoding="ascii", newline="") as handle:
        for left_id, right_id in _rows(csv.reader(handle)):
            pair = _pair(f"{left_source}:{left_id}", f"{right_source}:{right_id}")
            if limit is None or (pair[0] in keys and pair[1] in keys):
                gold.add(pair)
    return DataSet(name, {left_source: left, right_source: right}, gold)


def _files(name: str) -> list[Path]:
    base = data_dir()
    if name == "cora":
        paths = [base / "cora" / "cora.csv", base / "cora" / "cora_gt.csv"]
    elif name in _BIB:
        bib = base / "bib-dedupe" / _BIB[name][0]
        paths = [bib / "records_pre_merged.csv", bib / "merged_record_ids.csv"]
    elif name not in _TWO_TABLES:
        raise ValueError(f"unknown data set {name!r}; one of {', '.join(DATA_SETS)}")
    else:
        folder, left, _, _, right, _, _, mapping = _TWO_TABLES[name]
        paths = [base / folder / left, base / folder / right, base / folder / mapping]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise DataMissing(f"entity-resolution data not found: {', '.join(missing)} "
                          f"(set ER_DATA_DIR; default {DEFAULT_DIR} from the repository root)")
    return paths


def _rows(reader: Iterable[list[str]]) -> Iterator[list[str]]:
    rows = iter(reader)
    next(rows, None)  # the header
    yield from rows


def _read_table(path: Path, source: str, encoding: str) -> list[Record]:
    with path.open(encoding=encoding, newline="") as handle:
        return [Record(source, row["id"], row["title"], split_authors(row["authors"]),
                       row["authors"], row["venue"], _int_year(row["year"]))
                for row in csv.DictReader(handle)]


def _int_year(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() else None


def split_authors(text: str, separators: re.Pattern[str] = _COMMAS) -> tuple[str, ...]:
    """Names at the field's separators: ``"a, b, and c,"`` -> ``("a", "b", "c")`` (Cora's)."""
    return tuple(name for name in (n.strip() for n in separators.split(text)) if name)


def _cora(limit: int | None) -> DataSet:
    records_path, gold_path = _files("cora")
    with records_path.open(encoding="ascii", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="|", quoting=csv.QUOTE_NONE))
    header = rows[0]
    column = {name: header.index(name) for name in ("Entity Id", "author", "title", "venue",
                                                    "year")}
    records = []
    for row in rows[1:]:
        year = _CORA_YEAR.search(row[column["year"]])
        authors = row[column["author"]]
        records.append(Record("Cora", row[column["Entity Id"]], row[column["title"]],
                              split_authors(authors, _COMMAS_AND), authors,
                              row[column["venue"]], int(year.group()) if year else None))
    records = records[:limit]
    keys = {r.key for r in records}
    with gold_path.open(encoding="ascii", newline="") as handle:
        pairs = [(f"Cora:{a}", f"Cora:{b}") for a, b in csv.reader(handle, delimiter="|")]
    gold = {p for p in within_cluster_pairs(pairs) if p[0] in keys and p[1] in keys}
    return DataSet("cora", {"Cora": records}, gold)


def _bib(name: str, limit: int | None) -> DataSet:
    records_path, clusters_path = _files(name)
    source = _BIB[name][1]
    with records_path.open(encoding="utf-8", newline="") as handle:
        records = [Record(source, row["ID"], row["title"], split_authors(row["author"], _AND),
                          row["author"], row["journal"], _int_year(row["year"]),
                          row["ENTRYTYPE"].strip())
                   for row in csv.DictReader(handle)][:limit]
    keys = {r.key for r in records}
    with clusters_path.open(encoding="ascii", newline="") as handle:
        clusters = [[f"{source}:{rid.strip()}" for rid in row[0].split(";") if rid.strip()]
                    for row in _rows(csv.reader(handle)) if row]
    # A cluster links its members to its first; within_cluster_pairs closes it.
    gold = {p for p in within_cluster_pairs((c[0], other) for c in clusters for other in c[1:])
            if p[0] in keys and p[1] in keys}
    return DataSet(name, {source: records}, gold)


def within_cluster_pairs(pairs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """Every pair inside the clusters that ``pairs`` link (their transitive closure)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        parent[find(a)] = find(b)
    clusters: dict[str, list[str]] = {}
    for x in list(parent):
        clusters.setdefault(find(x), []).append(x)
    return {_pair(a, b) for members in clusters.values()
            for i, a in enumerate(members) for b in members[i + 1:]}


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)
