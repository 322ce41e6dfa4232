"""Titles and names as they were meant to be printed.

Profile sites and the records behind them damage text in a few recurring ways;
``repair_text`` undoes the ones that can be undone, ``clean_title`` also removes
what other fields left glued to a title. Both are pure and idempotent.

* **HTML entities**, named or numeric, escaped once or twice: ``Lud&#228;scher``,
  ``&rho;``, ``&#961;``, ``&amp;#228;`` -> ``Ludäscher``, ``ρ``, ``ρ``, ``ä``.
* **Mojibake**: UTF-8 bytes read as Latin-1 or Windows-1252. Each run of a UTF-8
  lead character (``Ã``, ``Â``, ``â``, ``ð``...) followed by continuation characters
  is re-encoded and decoded again when that yields valid UTF-8: ``SjÃ¶strÃ¶m`` ->
  ``Sjöström``, ``â€™`` -> ``’``. A run whose continuation bytes were lost to
  ``?`` cannot be restored: ``â??`` (almost always a curly quote or a dash) reads as
  an apostrophe, so ``Floridaâ??s`` -> ``Florida's``. Where only the middle byte of
  ``â`` (0xE2) was lost and the last survives, the lost one is 0x80 (the bytes
  0x80-0x9F are the ones Latin-1 cannot show, and E2 80 xx is the block of dashes,
  quotes and "…"): ``S Chaudhuriâ?¦`` -> ``S Chaudhuri…``, a list cut short.
* **LaTeX** is left to ``scholarindex.core.text.fold`` (every comparison folds), so a cleaned
  title still shows ``$\\alpha$`` as printed.
* **Glued fields** (``clean_title`` only), removed when what remains still has at
  least ``MIN_TITLE_WORDS`` words:
  - the kind of contribution, which one listing prints and another does not:
    ``(panel)``, ``(Panel Summary)``, ``(Experience Paper)``, ``[Extended
    Abstract]``, ``(tutorial session)``, ``(Demonstration Description)``, ``(system
    demonstration)``, ``(project demo)`` wherever they stand, ``Tutorial:``,
    ``Panel:``, ``Vision paper:`` at the start, ``? Panel``, ``, System
    Demonstration``, ``. Demo Description`` and `` - Book Review`` at the end (not
    "(extended version)": that is another publication). What the annotation says is kept apart
    (``contribution_kind``: tutorial, panel, keynote, demo, poster, talk):
    ``decide`` reads it;
  - leading search-engine tags: ``[PDF]``, ``[CITATION]``, ``[BOOK]``...; Google
    Scholar's link to a paper's other versions after the title, ``- group of 2 »``; a
    citation's trailing document type code (GB/T 7714: ``[J]``, ``[C]``, ``[M]``...);
  - a trailing year: ``... Databases (1999)``, ``... Databases, 1999.``;
  - a trailing venue: from ``. In ...``, ``. Proc. ...``, ``. Proceedings ...``,
    ``. Journal ...``, ``. IEEE Trans...``, ``. ACM Trans...``, ``. Lecture Notes
    ...``, ``. Technical Report ...``, a publisher, institution or meeting (``, ACM
    SIGMOD Int``, ``, University of Maryland``, ``. Dept. of ...``, ``, Int'l Conf``,
    ``, Workshop``, ``published in``, a meeting by its ordinal, ``. 22nd Conf. on
    ...``, ``. 20th Int``, a citation's status, ``. To appear in ...``, ``, submitted
    to ...``) (and the same after ``,`` or `` - ``), or a
    proceedings glued on without a mark, capitals as printed (``... Predicates In Proc.
    of ACM SIGMOD``, ``... Proc. of the 1996 ...``, ``... Proceedings of ...``), to the
    end (after a full stop, ``MIN_WORDS_AFTER_SURE_CUT`` (2) words of title may
    remain: "Petabyte Databases. In ..."); a venue and its year after a comma (``,
    SIGMOD 1999``); and any of the atom's own ``venues`` printed at the end;
  - what a citation prints right after the title, from the mark before it to the end:
    pages (``(pp. 442-453)``, ``. 266-275. 1997``, ``. 13p``), a volume, a report's
    number (``, IBM Research Report RJ9839``, ``:[Technical Report CMPT99-12]``), a link
    (``. At http://...``), the editors (``. Eds., Haas, LM``, ``, Jagadish HV, Mumick IS,
    Eds``), a meeting by its acronym and year (``, VLDB'97``), ``. To app. at ...``,
    ``, in``Proceedings ...``, a lone ``. Intl``; not a tail that names a venue first
    (``. Machine Learning 5 197-227``: which version the citation is of);
  - leading or trailing authors: a segment before a ``. `` or ``:`` (or after a
    ``. ``; the full stop of an initial, "H. V.", does not end a segment) of at
    most ``MAX_AUTHOR_SEGMENT_WORDS`` words, every part of which (split at ``,``,
    ``;``, ``and``, ``&``) is a name and at least one of which is one of the atom's
    own ``people`` (``scholarindex.core.names.same_person``), a suffix ("Jr.") alone
    counting as none; what remains keeps at least ``MIN_WORDS_AFTER_SURE_CUT`` (2)
    words. Names are cut before a venue is looked for ("I Ahn. In Memory of ...",
    "F Gingras, IN Subramanian. ...": neither "In" starts a venue). A citation's
    leading authors and year go whoever they are: names (a comma or an initial among
    them) ending in a year and a full stop, a colon or the year's bracket ("Shim, K.
    1998. CURE: ...", "Lin, K.-I.(1995). FastMap ...", "J.(1997): On-Line ..."; or a
    surname alone and the year in brackets, "Mehrotra (2001) Locally ..."; not a year
    range, "1975-2000.");
    and, whoever they are, the end of a citation's author list that a site cut into the
    title: short parts at commas, then "and" and a name with initials, then a full
    stop, a colon, or a comma before a quote or a capital ("Neil, and D. Shasha. The
    Dangers ...", "B. Shapiro, D. Shasha, and K. Zhang, Combinatorial ...", "andR. Rastogi.
    Querying ...", "JM, Hellerstein, and DA Patterson. High-Performance ...").

* **A citation's year** (``cited_year``): a citation printed as a title gives its year in
  brackets ("Lin, K.-I.(1995). FastMap ...", "schapire (1991). bounds on ..."); a
  listing that prints no year of its own is of that year. One year only: two are two
  citations' or a range's.

* **Notes of bibliographic databases** (``clean_title`` only), which exports of MEDLINE,
  Embase, CINAHL or the CRD databases print inside the title field, so one paper's
  records differ by them: bracketed notes wherever they stand, ``[Review]``, ``[45
  refs]``, ``[Erratum appears in ...]``, ``[Comment in: ...]``, ``[Retraction in
  ...]``, ``[abstract]``, a language (``[French]``, ``[Article in German]``, ``(author's
  transl)``); the CRD's ``(Provisional abstract)``, ``(Structured abstract)``; a trailing
  language code ``LA: Ara``; Embase's ``<ORIGINAL>`` and the original-language title after
  it, or a ``TO:`` field after a bracketed translated title; and the brackets around a
  whole title, MEDLINE's mark of a title translated into English (``[Immunotherapy of
  resectable lung cancer ...]``). Each goes only when ``MIN_TITLE_WORDS`` remain. A note
  names the record, not the paper; a language tag says in which language the paper is,
  which the other records need not say.

A title cut short keeps its mark, a trailing "..." written "…" (``decide`` reads it).
"""

from __future__ import annotations

import contextlib
import html
import re
from collections.abc import Iterable
from functools import lru_cache

from scholarindex.core import memo
from scholarindex.core.names import SUFFIXES, parse_name, same_person
from scholarindex.core.text import words

MIN_TITLE_WORDS = 3
# What may remain after a surer cut: the atom's own people's names, a full stop then a venue.
MIN_WORDS_AFTER_SURE_CUT = 2
MAX_AUTHOR_SEGMENT_WORDS = 64

# Windows-1252 (and Latin-1 for its five holes) character -> the byte it came from.
_BYTE_OF: dict[str, int] = {}
for _byte in range(0x80, 0x100):
    _BYTE_OF[chr(_byte)] = _byte  # read as Latin-1
    with contextlib.suppress(UnicodeDecodeError):  # cp1252 leaves five bytes undefined
        _BYTE_OF[bytes([_byte]).decode("cp1252")] = _byte
_CONTINUATION = "".join(re.escape(ch) for ch, b in _BYTE_OF.items() if 0x80 <= b <= 0xBF)
_LEAD = "".join(re.escape(ch) for ch, b in _BYTE_OF.items() if 0xC2 <= b <= 0xF4)
_MOJIBAKE = re.compile(f"[{_LEAD}][{_CONTINUATION}]{{1,3}}")
_LOST_QUOTE = re.compile(r"â\?\?")
_LOST_MIDDLE = re.compile(f"â\\?([{_CONTINUATION}])")
_LOST_ANY = re.compile(f"[{_LEAD}]\\?")


def _expected_length(lead: int) -> int:
    return 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


def _repair_run(match: re.Match[str]) -> str:
    run = match.group()
    raw = bytes(_BYTE_OF[ch] for ch in run)
    size = _expected_length(raw[0])
    if len(raw) < size:
        return run
    try:
        return raw[:size].decode("utf-8") + run[size:]
    except UnicodeDecodeError:
        return run


def _repair_lost_middle(match: re.Match[str]) -> str:
    return bytes([0xE2, 0x80, _BYTE_OF[match.group(1)]]).decode("utf-8")


def repair_text(text: str) -> str:
    """HTML entities decoded and mojibake repaired (see the module doc)."""
    if "&" in text:
        for _ in range(3):  # "&amp;#228;" is escaped twice
            unescaped = html.unescape(text)
            if unescaped == text:
                break
            text = unescaped
    if not text.isascii():
        text = _MOJIBAKE.sub(_repair_run, text)
        text = _LOST_MIDDLE.sub(_repair_lost_middle, text)
        text = _LOST_QUOTE.sub("'", text)
    text = text.replace("\u00a0", " ")
    return " ".join(text.split())


_KINDS = (r"(?:extended\s+|panel\s+|short\s+|position\s+|invited\s+|industrial\s+|experience\s+"
          r"|system\s+|project\s+)?"
          r"(?:abstract|panel|panel\s+summary|panel\s+session|summary|experience\s+paper|tutorial"
          r"|tutorial\s+session|demo|demonstration|demonstration\s+description|demo\s+description"
          r"|poster|talk|keynote|paper|session)")
# "(panel)", "(Experience Paper)", "[Extended Abstract]", "(Demonstration Description)"
# anywhere; "Tutorial:", "Vision paper:" at the start; "? Panel", " - Book Review" at the end.
_ANNOTATION = re.compile(rf"\s*[(\[]\s*{_KINDS}\s*[)\]]", re.I)
_KIND_PREFIX = re.compile(r"^\s*(?:tutorial|panel|keynote|demo|invited\s+talk|poster"
                          r"|(?:[\w-]+\s+){1,2}paper)\s*:\s*", re.I)
# "Objects and SQL: Strange Relations? Panel", "VisDB, System Demonstration": the kind alone
# after the title's last mark.
_KIND_SUFFIX = re.compile(r"(?<=[.?!,:])\s+(?:tutorial|panel|keynote|poster"
                          r"|(?:system\s+|project\s+)?(?:demo|demonstration)(?:\s+description)?)\s*$"
                          r"|\s+-\s+book\s+review\s*$", re.I)
_TAGS = re.compile(r"^(?:\s*\[(?:pdf|html|htm|citation|book|b|c|ps|doc|ppt|s)\])+\s*", re.I)
# Google Scholar's link to a paper's other versions, printed after the title: "- group of 2 »".
_VERSIONS_LINK = re.compile(r"\s+[-–]\s+group\s+of\s+\d+\s*»?\s*$", re.I)
# A citation's document type code after the title (GB/T 7714: "[J]" journal, "[C]"
# proceedings, "[M]" book, "[D]" thesis, "[R]" report, "[A]" a part, "[EB/OL]" online).
_TYPE_CODE = re.compile(r"\s*\[(?:[JCMDRAPSNZ]|EB/OL|J/OL|DB/OL)\][\s.]*$")
_TRAILING_YEAR = re.compile(r"[\s,.;:]*[(\[]?\b(?:19|20)\d\d[a-z]?[)\]]?[\s.]*$")
_VENUE_TAIL = re.compile(
    r"(?:[.,;]\s+|\s+[-–—]\s+)(?:In:?\s+\S|Proc\b|Proc\.|Proceedings\b|Journal\b|"
    r"(?:IEEE|ACM)\s+Trans|Lecture\s+Notes\b|LNCS\b|Tech(?:nical|\.)\s+Rep"
    # a publisher, an institution, a meeting: "..., ACM SIGMOD Int", ". University of ..."
    r"|(?:ACM|IEEE|SIAM)\b|Int(?:'?l|ernational)\s+Conf|Univ(?:ersity|\.)?\b"
    r"|(?:Conference|Conf\.|Symposium|Workshop)\b|Dep(?:artmen)?t\.?\s+of\b"
    r"|published\s+in\b|\d+\s*(?:st|nd|rd|th)\s+(?:Int|Conf|Symp|VLDB|ACM|IEEE)"
    # a citation's status: ". To appear in ...", ". Submitted to ..."
    r"|to\s+appear\b|submitted\s+(?:to|for)\b)"
    # A proceedings glued on without a mark: "... Range Predicates In Proc. of ACM SIGMOD",
    # "... Predicates Proc. of the 1996 ACM SIGMOD" (capitals as printed).
    r"|\s+(?-i:In:?\s+)?(?-i:Proc\.|Proceedings\s+of\b)",
    re.IGNORECASE,
)
# What a citation prints right after the title and no title holds, after a mark ("." ","
# ";", or a bracket opened): pages ("pp. 442-453", ". 266-275. 1997. Athens", ". 13p"), a
# volume ("Vol. 2"), a report's number ("IBM Research Report RJ9839", ":[Technical Report
# CMPT99-12]", "Informatik-Report 141"), a link ("At http://db"), the editors ("Eds., Haas,
# LM", "Jagadish HV, Mumick IS, Eds"), a meeting by its acronym and year ("VLDB'97",
# "SIGMOD'98 Seattle"), "To app.", "in``Proceedings", and a proceedings' word left alone
# (". Int", ". Intl", ". Procs"). Only right after the mark: a tail that names a venue first
# (". Machine Learning 5 197-227") says which version the citation is of, which a reader
# of the venue needs (a technical report, the conference paper, the journal's).
_CITATION_TAIL = re.compile(
    r"(?:[.,;]\s+|\s*[(\[]|:\s*[(\[])(?:"
    r"pp?\.\s*\d|\d{1,4}\s*(?:-|–|\{)\s*\d+\s*(?:[.,;)]|$)|\d+\s*pp?\b\.?\s*$"
    r"|vol(?:ume)?\.?\s*\d"
    r"|(?:[\w-]+\s+){0,2}(?:[\w-]*-)?report\s+[a-z-]*\d|technical\s+(?:report|note)\b"
    r"|(?:at\s+)?(?:https?://|www\.)|eds?\.?,|(?:[^.;]*,\s*)?eds?\.?\s*$"
    r"|(?-i:[A-Z]{3,}\s?'\d\d\b)|to\s+app\.|in\s*[`'\"“”‘’]+\s*proc"
    r"|(?:int'?l?|procs?)\.?\s*$)",
    re.IGNORECASE,
)
_YEAR_RANGE = re.compile(r"\b(?:19|20)\d\d\s*[-–]\s*(?:19|20)?\d\d\b")
# A tail's pages (" pp." or a volume's "(3):"): a range of years beside them is no title's.
_PAGES = re.compile(r"(?i)\bpp?\.|\(\d+\)\s*:")
# A venue and its year after a comma: ", SIGMOD 1999", ", ACM CHI'98 1998" (before the year
# alone is taken: ", SIGMOD" would be left).
_VENUE_YEAR = re.compile(r",\s+(?:[^\s,]+\s+){1,3}(?:19|20)\d\d[a-z]?[\s.)]*$")
# Languages database exports tag a title with ("[French]", "[Article in German]").
_LANGUAGES = ("english|french|german|spanish|italian|portuguese|dutch|russian|polish|czech"
              "|slovak|hungarian|romanian|bulgarian|croatian|serbian|slovenian|ukrainian|greek"
              "|turkish|arabic|persian|hebrew|chinese|japanese|korean|danish|swedish|norwegian"
              "|finnish|icelandic|estonian|latvian|lithuanian|catalan|thai|vietnamese"
              "|indonesian|malay")
# A bracketed note whose first words say it is a database's note on the record.
_EXPORT_NOTE = re.compile(
    r"\s*\[\s*(?:review(?:\s+article)?|\d+\s+refs?|(?:published\s+)?errat(?:um|a)\b[^\]]*"
    r"|(?:see\s+)?comments?\b[^\]]*|retract(?:ion|ed)\b[^\]]*|corrected\b[^\]]*"
    r"|update\s+(?:in|of)\b[^\]]*|expression\s+of\s+concern\b[^\]]*"
    r"|(?:meeting\s+|conference\s+)?abstract"
    rf"|(?:article\s+)?(?:in\s+)?(?:{_LANGUAGES})(?:\s*(?:,|and)\s*(?:{_LANGUAGES}))*"
    r")\s*\]"
    r"|\s*\(\s*(?:provisional|structured)\s+abstract\s*\)"
    r"|\s*\(\s*author'?s'?\s+transl\.?\s*\)"
    rf"|\s*\(\s*(?:article\s+)?in\s+(?:{_LANGUAGES})\s*\)",
    re.IGNORECASE)
# Embase's "<ORIGINAL> ..." and a "TO: ..." (title, original) field after a translated title.
_ORIGINAL = re.compile(r"\s*<\s*original\s*>.*$|(?<=\])\s+TO:\s.*$",
                       re.IGNORECASE | re.DOTALL)
_LANGUAGE_CODE = re.compile(r"\s+LA:\s*[A-Za-z]{2,3}\s*$")
_BRACKETED = re.compile(r"^\s*\[(?P<title>[^\[\]]+)\][\s.]*$")
_NOT_A_LETTER = re.compile(r"[\W\d_]")
_NAME_SPLIT = re.compile(r"\s*(?:,|;|&|\band\b)\s*")


def _word_count(text: str) -> int:
    return len(words(text))


def _is_name_list(segment: str, people: tuple[str, ...]) -> bool:
    if not people or _word_count(segment) > MAX_AUTHOR_SEGMENT_WORDS:
        return False
    parts = [p for p in _NAME_SPLIT.split(segment.strip(" ."))
             if p and p.lower() != "et al" and p.lower().strip(".") not in SUFFIXES]
    if not parts or any(len(p.split()) > 4 or parse_name(p) is None for p in parts):
        return False
    return any(same_person(part, person) for part in parts for person in people)


def _full_stops(title: str) -> list[int]:
    """Where ``title`` has a full stop and a space that ends something, not an initial's
    ("H. V. Jagadish, Laks V. S. Lakshmanan. Snakes ...": only the one after "Lakshmanan")."""
    stops = []
    for match in re.finditer(r"\. ", title):
        word = title[title.rfind(" ", 0, match.start()) + 1: match.start()]
        if len(_NOT_A_LETTER.sub("", word)) > 1:
            stops.append(match.start())
    return stops


def _strip_export_notes(title: str) -> str:
    """A database's notes on the record taken out (see the module doc)."""
    for pattern in (_ORIGINAL, _LANGUAGE_CODE, _EXPORT_NOTE, _TYPE_CODE):
        bare = pattern.sub("", title)
        if bare != title and _word_count(bare) >= MIN_TITLE_WORDS:
            title = bare
    if bracketed := _BRACKETED.match(title):
        title = bracketed["title"]
    return title.strip()


# A citation's leading authors and year ("Shim, K. 1998. CURE: ...", "PO'Neil and D.
# Shasha, 1997. The Dangers ...", "Lin, K.-I.(1995). FastMap ..."): names (a comma or an
# initial among them) ending in a year, then a full stop, a colon or the year's bracket.
_CITED = re.compile(r"^(?P<head>[^.:;]{0,80}?(?:,|\b[A-Z]\.)[^:;]{0,80}?\(?"
                    r"(?<![-–\d])(?:19|20)\d\d[a-z]?(?:\)[.:]?|[.:]))\s+(?P<rest>\S.*)$"
                    # or a surname alone and the year in brackets: "Mehrotra (2001) ..."
                    r"|^[A-Z][\w'’-]+\s?\((?:19|20)\d\d[a-z]?\)[.:]?\s+(?P<alone>\S.*)$")


# The end of a citation's author list left before the title, where a site cut the list
# into its author field and title ("Neil, and D. Shasha. The Dangers ...", "andR. Rastogi.
# Querying ...", "JM, Hellerstein, and DA Patterson. High-Performance ..."): short parts
# at commas, then "and" and a name with initials, then a full stop, a colon or a quote.
_NAME_AFTER_AND = r"(?:[A-Z]\.\s*(?:-\s*)?)+\s*[A-Z][\w'’\-]+|[A-Z]{1,3}\s+[A-Z][\w'’\-]+"
_CITED_TAIL = re.compile(r"^,?\s*(?:[^,:;]{1,40},\s*){0,5}?(?:and|und|&)\s*(?:" + _NAME_AFTER_AND
                         + r")(?:[.:]\s+|,\s*(?=['\"“‘A-Z]))(?P<rest>\S.*)$")


def _strip_cited_authors(title: str) -> str:
    for pattern in (_CITED, _CITED_TAIL):
        if cited := pattern.match(title):
            rest = cited["rest"] or cited.groupdict().get("alone") or ""
            if _word_count(rest) >= MIN_TITLE_WORDS:
                title = rest
    return title


def _strip_authors(title: str, people: tuple[str, ...]) -> str:
    if not people or (":" not in title and ". " not in title):
        return title
    # A leading "A. Name, and B. Name. ...": the first full stop before which all is names.
    for stop in _full_stops(title):
        head, rest = title[:stop], title[stop + 2:]
        if _word_count(rest) >= MIN_WORDS_AFTER_SURE_CUT and _is_name_list(head, people):
            title = rest.strip()
            break
    head, sep, rest = title.partition(":")
    if sep and _word_count(rest) >= MIN_WORDS_AFTER_SURE_CUT and _is_name_list(head, people):
        title = rest.strip()
    # A trailing "... . A. Name, B. Name": the first full stop after which all is names.
    for stop in _full_stops(title):
        body, tail = title[:stop], title[stop + 2:]
        if _word_count(body) >= MIN_WORDS_AFTER_SURE_CUT and _is_name_list(tail, people):
            return body.strip()
    return title


def _strip_venue(title: str, venues: tuple[str, ...]) -> str:
    match = _VENUE_TAIL.search(title)
    # After a full stop ("Petabyte Databases. In Proc. ...") a short title is surely one;
    # after a comma or a dash, the title keeps ``MIN_TITLE_WORDS``.
    if match and _word_count(title[: match.start()]) >= (
            MIN_WORDS_AFTER_SURE_CUT if title[match.start()] == "." else MIN_TITLE_WORDS):
        title = title[: match.start()]
    if not venues:
        return title
    folded_title = " ".join(words(title))
    for venue in venues:
        folded_venue = " ".join(words(venue))
        if (folded_venue and folded_title.endswith(" " + folded_venue)
                and _word_count(title) - _word_count(venue) >= MIN_TITLE_WORDS):
            # Cut the printed title where its last len(venue) words begin.
            keep = _word_count(title) - _word_count(venue)
            title = _cut_after_words(title, keep)
            folded_title = " ".join(words(title))
    return title


def _strip_citation_tail(title: str) -> str:
    """The title without what a citation prints after it (``_CITATION_TAIL``), from the
    first mark that starts such a tail; not a range of years, which a title may hold
    ("Database Research: 1975-2000")."""
    for match in _CITATION_TAIL.finditer(title):
        tail = title[match.start():]
        if _YEAR_RANGE.search(tail) and not _PAGES.search(tail):
            continue
        if _word_count(title[: match.start()]) >= MIN_TITLE_WORDS:
            return title[: match.start()]
    return title


def _cut_after_words(text: str, count: int) -> str:
    seen = 0
    for match in re.finditer(r"[A-Za-z0-9\u00c0-\uffff]+", text):
        if words(match.group()):
            seen += len(words(match.group()))
        if seen >= count:
            return text[: match.end()]
    return text


_KIND_MARKS = (_ANNOTATION, _KIND_PREFIX, _KIND_SUFFIX)
_KIND_WORDS = {"tutorial": "tutorial", "panel": "panel", "keynote": "keynote", "demo": "demo",
               "demonstration": "demo", "poster": "poster", "talk": "talk"}


@lru_cache(maxsize=memo.PRINTINGS)  # asked of every printing of an atom each time it is built
def contribution_kind(title: str) -> str | None:
    """The kind of contribution a title is annotated as ("Tutorial: X", "X (panel)",
    "X (Demonstration Description)"): one of ``_KIND_WORDS``' kinds, or None (a paper,
    or an annotation that says nothing of the kind: "[Extended Abstract]")."""
    title = repair_text(title)
    for pattern in _KIND_MARKS:
        for match in pattern.finditer(title):
            for word in words(match.group()):
                if word in _KIND_WORDS:
                    return _KIND_WORDS[word]
    return None


@lru_cache(maxsize=memo.PRINTINGS)
def _clean(title: str, venues: tuple[str, ...], people: tuple[str, ...]) -> str:
    title = repair_text(title)
    tagless = _VERSIONS_LINK.sub("", _TAGS.sub("", title))
    if tagless != title and _word_count(tagless) >= 1:
        title = tagless
    title = _strip_export_notes(title)
    for _ in range(2):  # "Title. In Proc. VLDB, 1999": the year, then the venue
        before = title
        for pattern in _KIND_MARKS:
            bare = pattern.sub("", title)
            if bare != title and _word_count(bare) >= MIN_TITLE_WORDS:
                title = bare
        for pattern in (_VENUE_YEAR, _TRAILING_YEAR):
            yearless = pattern.sub("", title)
            if yearless != title and _word_count(yearless) >= MIN_TITLE_WORDS:
                title = yearless
        # Names first: a leading "I Ahn. In Memory of ..." or "IN Subramanian" is no venue.
        title = _strip_cited_authors(title)
        title = _strip_authors(title, people)
        title = _strip_venue(title, venues)
        title = _strip_citation_tail(title)
        if title == before:
            break
    title = title.rstrip()
    if title.endswith("..."):  # cut short: one mark, kept (``similarity.misprinted``)
        title = title[:-3] + "…"
    return title.strip(" .,;:-–—")


def clean_title(title: str, *, venues: Iterable[str] = (), people: Iterable[str] = ()) -> str:
    """The title with entities, mojibake and glued fields removed (see the module doc).

    ``venues`` and ``people`` are the atom's own venues and names: only those are
    recognised when glued to the title.
    """
    return _clean(title, tuple(venues), tuple(people)) or title.strip()


_BRACKETED_YEAR = re.compile(r"\(\s*((?:19|20)\d\d)[a-z]?\s*\)")


def cited_year(titles: Iterable[str]) -> int | None:
    """The one year the ``titles`` print in brackets, as a citation prints its year
    ("Lin, K.-I.(1995). FastMap ..."), or None (none, or several: "(1998) ... (2001)")."""
    years = {int(y) for title in titles for y in _BRACKETED_YEAR.findall(title)}
    return years.pop() if len(years) == 1 else None


def fold_name(name: str) -> str:
    """A printed name repaired (entities, mojibake) for ``core.names``: ``Lud&#228;scher``."""
    return repair_text(name)

