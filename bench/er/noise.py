"""A development data set printed the way another site prints it: one kind of noise at a time.

    python -m bench.er.evaluate --data dblp-acm --noise scholar-names

DBLP-ACM's second table is clean: full names, every year. The sites the product
meets are not: Google Scholar prints every name as capital initials and a surname
("JD Ullman", "H Garcia-Molina") and gives no year for about half its records. Each
noise below rewrites the second table of a two-table data set (the gold is
unchanged), so the evaluator shows how resolution holds when that one field is
printed that way, on data the rules may be fitted to.

* ``scholar-names``: every author as initials in capitals, glued, then the
  surname (the last word, with the particles before it: "van der Aalst").
* ``no-year``: the year dropped from ``NO_YEAR_SHARE`` of the records, chosen by a
  hash of the record's key (the same records every run).
* ``cut-titles``: titles longer than ``CUT_AT`` characters cut there, mid-word
  where it falls, and ended with "…", as a results page shows a long title.
* ``mojibake``: entities decoded, then the UTF-8 bytes of titles and names read as
  Windows-1252 ("Sjöström" -> "SjÃ¶strÃ¶m", "’" -> "â€™").
* ``glued-authors`` / ``glued-venue``: the author list before the title
  ("JD Ullman, J Widom. Title"), the venue after it ("Title. In VLDB"), as an
  extractor that missed a field boundary leaves them.
* ``year-off``: ``YEAR_OFF_SHARE`` of the records a year early or late (by hash), as
  Scholar gives the year of another printing of the paper (the preprint, the
  proceedings' volume, the journal version it merged in).
* ``typos``: one typo in the title (two letters swapped, one dropped or one
  doubled, in a word of at least ``TYPO_MIN_LETTERS`` letters), as text read from a
  PDF or typed into a citation carries.
* ``duplicates``: the paper printed more than once, as Scholar lists one paper
  under several records (up to 20 for one DBLP record): ``DUPLICATE_SHARE`` of the
  records get one or two more printings right after them, each with one other kind
  of damage above (drawn by hash), under the key ``<key>~<n>``; the gold pairs each
  printing with the original's partners. Run it last: what came before applies
  to the original and its printings alike.
"""

from __future__ import annotations

import html
import zlib
from dataclasses import replace

from bench.er.data import DataSet, Record

NO_YEAR_SHARE = 0.5
CUT_AT = 50
TYPO_MIN_LETTERS = 4
YEAR_OFF_SHARE = 0.2
DUPLICATE_SHARE = 0.5
_PARTICLES = {"van", "von", "der", "den", "de", "del", "della", "da", "di", "du", "le", "la"}


def scholar_name(name: str) -> str:
    """"Jeffrey D. Ullman" -> "JD Ullman"; "Wil M. P. van der Aalst" -> "WMP van der Aalst"."""
    parts = name.replace(".", ". ").split()
    if len(parts) < 2:
        return name
    surname_at = len(parts) - 1
    while surname_at > 1 and parts[surname_at - 1].lower() in _PARTICLES:
        surname_at -= 1
    initials = "".join(part[0].upper() for part in parts[:surname_at] if part[0].isalpha())
    surname = " ".join(parts[surname_at:])
    return f"{initials} {surname}" if initials else surname


def _with_authors(record: Record, authors: tuple[str, ...], title: str | None = None) -> Record:
    return replace(record, authors=authors, authors_text=", ".join(authors),
                   title=record.title if title is None else title)


def _scholar_names(record: Record) -> Record:
    return _with_authors(record, tuple(scholar_name(a) for a in record.authors))


def _draw(key: str, salt: str = "") -> int:
    """A number in [0, 1000) fixed by the record's key (the same records every run)."""
    return zlib.crc32(f"{salt}{key}".encode()) % 1000


def _no_year(record: Record) -> Record:
    dropped = _draw(record.key) < NO_YEAR_SHARE * 1000
    return replace(record, year=None) if dropped else record


def _year_off(record: Record) -> Record:
    draw = _draw(record.key, "year-off")
    if record.year is None or draw >= YEAR_OFF_SHARE * 1000:
        return record
    return replace(record, year=record.year + (1 if draw % 2 else -1))


def _cut_title(record: Record) -> Record:
    if len(record.title) <= CUT_AT:
        return record
    return replace(record, title=record.title[:CUT_AT].rstrip() + "…")


def mojibake(text: str) -> str:
    """``text``'s UTF-8 bytes read as Windows-1252 (bytes it leaves undefined as Latin-1)."""
    raw = html.unescape(text).encode("utf-8")
    return "".join(bytes([b]).decode("cp1252", errors="ignore") or chr(b) for b in raw)


def _mojibake(record: Record) -> Record:
    return _with_authors(record, tuple(mojibake(a) for a in record.authors),
                         title=mojibake(record.title))


def _glued_authors(record: Record) -> Record:
    if not record.authors_text:
        return record
    return replace(record, title=f"{record.authors_text}. {record.title}")


def _glued_venue(record: Record) -> Record:
    if not record.venue:
        return record
    return replace(record, title=f"{record.title}. In {record.venue}")


def typo(word: str, draw: int) -> str:
    """``word`` with one typo, chosen by ``draw``: two letters swapped, one dropped or one
    doubled, never the first letter."""
    at = 1 + draw % (len(word) - 2)
    kind = draw // 7 % 3
    if kind == 0:
        return word[:at] + word[at + 1] + word[at] + word[at + 2:]
    if kind == 1:
        return word[:at] + word[at + 1:]
    return word[:at] + word[at] + word[at:]


def _typos(record: Record) -> Record:
    words = record.title.split(" ")
    long = [i for i, w in enumerate(words) if len(w) >= TYPO_MIN_LETTERS and w.isalpha()]
    if not long:
        return record
    draw = _draw(record.key, "typo")
    at = long[draw % len(long)]
    words[at] = typo(words[at], draw)
    return replace(record, title=" ".join(words))


NOISES = {"scholar-names": _scholar_names, "no-year": _no_year, "cut-titles": _cut_title,
          "mojibake": _mojibake, "glued-authors": _glued_authors, "glued-venue": _glued_venue,
          "typos": _typos, "year-off": _year_off}
DAMAGES = sorted(NOISES)  # what a duplicate printing may carry


def _duplicates(data: DataSet, second: str) -> tuple[list[Record], set[tuple[str, str]]]:
    records: list[Record] = []
    gold = set(data.gold)
    partners: dict[str, list[str]] = {}
    for a, b in data.gold:
        partners.setdefault(a, []).append(b)
        partners.setdefault(b, []).append(a)
    for record in data.tables[second]:
        records.append(record)
        draw = _draw(record.key, "duplicates")
        copies = 0 if draw >= DUPLICATE_SHARE * 1000 else 1 + draw % 2
        for n in range(1, copies + 1):
            damage = DAMAGES[_draw(record.key, f"damage{n}") % len(DAMAGES)]
            copy = NOISES[damage](replace(record, id=f"{record.id}~{n}"))
            records.append(copy)
            gold |= {(min(copy.key, p), max(copy.key, p)) for p in partners.get(record.key, ())}
    return records, gold


CHOICES = (*DAMAGES, "duplicates")


def with_noise(data: DataSet, noise: str) -> DataSet:
    """``data`` with its second table rewritten by ``noise`` (one of ``CHOICES``)."""
    if not data.cross_source:
        raise ValueError(f"{data.name}: noise rewrites the second of two tables")
    first, second = data.tables
    if noise == "duplicates":
        records, gold = _duplicates(data, second)
    else:
        records, gold = [NOISES[noise](r) for r in data.tables[second]], data.gold
    tables = {first: data.tables[first], second: records}
    return DataSet(f"{data.name}+{noise}", tables, gold, [*data.notes, noise])
