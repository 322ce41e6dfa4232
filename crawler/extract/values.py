"""Typed values from printed text: counts, numbers, dates, author lists."""

from __future__ import annotations

import re
from datetime import date

from scholarindex.core.names import PARTICLES, SUFFIXES, name_key
from scholarindex.core.text import decode_entities

MONTHS = {
    name: number
    for number, names in enumerate(
        (("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
         ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
         ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
         ("dec", "december")),
        start=1,
    )
    for name in names
}
MONTH_PATTERN = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
# "May 14", "Dec 10, 2024", "Sept. 3 2021"
PRINTED_DATE = re.compile(
    rf"(?P<month>{MONTH_PATTERN})\s*(?P<day>\d{{1,2}})(?:\s*,?\s*(?P<year>(?:19|20)\d{{2}}))?"
)
_ET_AL = re.compile(r"(?:,|;)?\s*(?:\bet\.?\s*al\.?|…|\.\.\.)\s*$", re.I)
_AUTHOR_SEPARATORS = re.compile(r"\s*(?:[,;]|\band\b|&)\s*")
# A name's initials: "J.", "JD", "r.e.", "J.-P.", or one bare letter ("freund, y").
INITIALS = re.compile(r"[A-Z]{1,3}|[A-Za-z]|(?:[A-Za-z]\.-?){1,3}")
# Words no name holds: where a line in lower case has them, it is prose or a title.
_FUNCTION_WORDS = frozenset(
    "a an the of in on for to with by from at as or is are was were be been we our this that "
    "these those via using into over under between its it not can how what when which who "
    "new towards toward through".split()
)
_NAME_PUNCTUATION = str.maketrans("", "", ".-'’")
# In a line of "surname, given" people, ";" separates them (and "and", "&").
_PEOPLE_SEPARATORS = re.compile(r"\s*(?:;|\band\b|&)\s*")
_SURNAME_FIRST = re.compile(r"[^\s,]+,[^,]+")  # "drucker, harris"


def to_int(text: str | None) -> int | None:
    """``"1,287"`` -> 1287; None for anything that is not a whole number."""
    if text is None:
        return None
    digits = text.replace(",", "").replace("\u202f", "").replace(" ", "").strip()
    return int(digits) if digits.isdigit() else None


def to_number(text: str | None) -> int | float | None:
    """The number as printed: ``"40"`` -> 40, ``"7.5"`` -> 7.5."""
    if text is None:
        return None
    text = text.replace(",", "").strip()
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() and "." not in text else value


def printed_date(month: str, day: str, year: str | None, today: date) -> date | None:
    """A listing's date; without a year, the latest such day not after ``today``."""
    number = MONTHS.get(month.rstrip(".").lower())
    if number is None:
        return None
    day_number = int(day)
    if year:
        try:
            return date(int(year), number, day_number)
        except ValueError:
            return None
    # Walk back at most 8 years: far enough for 29 February.
    for candidate_year in range(today.year, today.year - 9, -1):
        try:
            candidate = date(candidate_year, number, day_number)
        except ValueError:
            continue
        if candidate <= today:
            return candidate
    return None


def _et_al(line: str) -> bool:
    """Does ``_ET_AL`` match, without letting it try every position of a line?

    The pattern is anchored at the end: a line it matches ends, but for trailing
    whitespace, in "al", "al.", "…" or "..." (any case), which is cheap to test.
    """
    tail = line.rstrip()[-3:].lower()
    return tail.endswith(("al", "al.", "…", "...")) and bool(_ET_AL.search(line))


def split_authors(line: str) -> tuple[list[str], bool]:
    """An author line as printed -> (names without ``et al.``, whether it was truncated)."""
    names, truncated, _ = _read_line(line)
    return names, truncated


def _read_line(line: str) -> tuple[list[str], bool, str]:
    """(names, truncated, the line's closing mark: "." ending a sentence, ":", or "")."""
    line = decode_entities(line)
    truncated = _et_al(line)
    if truncated:
        line = _ET_AL.sub("", line)
    line = line.rstrip(" ,;")
    closing = line[-1:]
    if closing == ":" or (closing == "." and not _abbreviation(line[line.rfind(" ") + 1:])):
        line = line[:-1].rstrip(" ,;")
    else:
        closing = ""
    return _names(line), truncated, closing


def _abbreviation(word: str) -> bool:
    """Does a name end in this word, period and all ("J.", "r.e.", "Jr.")?"""
    return bool(INITIALS.fullmatch(word)) or _suffix(word)


def _suffix(word: str) -> bool:
    return word.rstrip(".").lower() in SUFFIXES


def _names(line: str) -> list[str]:
    """The names between separators; initials or a suffix alone join the name before them.

    "blum, a., furst, m." is two people printed surname first; "Traina, Jr." one.
    "drucker, harris; schapire, robert": where every ";" piece is "surname, given",
    the ";" separate people and the commas stay in their names.
    """
    if ";" in line:
        people = [piece for piece in map(str.strip, _PEOPLE_SEPARATORS.split(line)) if piece]
        if all("," not in person or _SURNAME_FIRST.fullmatch(person) for person in people):
            return people
    names: list[str] = []
    for name in _AUTHOR_SEPARATORS.split(line):
        name = name.strip()
        if not name:
            continue
        if names and (_suffix(name) or (
                " " not in names[-1] and not INITIALS.fullmatch(names[-1])
                and all(map(INITIALS.fullmatch, name.split())))):
            names[-1] = f"{names[-1]}, {name}"
        else:
            names.append(name)
    return names


def looks_like_authors(line: str) -> bool:
    """Is this line a list of person names rather than prose?"""
    return read_authors(line) is not None


def read_authors(line: str, owner: str = "") -> tuple[list[str], bool] | None:
    """``split_authors(line)`` if the line is a list of person names, else None.

    The rule for an author line:

    - HTML entities printed as text read as their characters (``Lud&#228;scher``:
      its ``;`` is no separator); ``,`` ``;`` ``and`` ``&`` separate names.
    - A line ending in ``et al.`` is an author list, truncated. One ending in ``…``
      (or ``...``) is one only when what comes before reads as names by the rules
      below and holds no function word: a title cut short ends so too
      (``Analysis of a Parallel Collecti…``).
    - Initials or a suffix standing alone between separators belong to the one-word
      name before them (``blum, a.``, ``Traina, Jr.``); in a line whose ``;`` pieces
      are each ``surname, given``, the ``;`` alone separate names.
    - A trailing ``,`` or ``;`` is dropped. A final ``.`` ends a sentence unless
      it closes an initial or a suffix (``J.``, ``r.e.``, ``Jr.``); such a line
      is an author list only with several names or a name that shows it is one
      (initials, or ``surname, given``): ``Deep Learning.`` is a short sentence or
      a title, ``m. kearns.`` a name. A final ``:`` needs such a name too
      (``freund, y.:``; not ``Keywords:``). Ending in ``!`` or ``?``: not a list.
    - In a line with capitals, a name is 1-6 words, all capitalised but at most
      two (particles: van, de, al-; lower-case initials), and no sentence ends
      inside (a word of 4 letters or more closed by ``.`` before a capital, not a
      suffix: ``Standards. In ACM SIGMOD Record`` is a title and its venue; ``Univ.
      of Athens`` ends none); closed by ``.`` or ``:``,
      every word is capitalised, an initial, a particle or a suffix (prose that
      lists capitalised words, ``We compare BERT, GPT and T5.``, is not names).
    - A line without capitals (bibliographies that lower-case everything) must
      show it is names: 1-4 words a name, letters only (no digits, no function
      words: a title or prose has them), and a name that shows it is one, or
      three or more names of 2-3 words each. Two such names alone
      (``yoav freund and robert schapire``) read like a title
      (``on-line prediction and conversion strategies``) and are not taken.

    - On a profile page (``owner``: the name the page is about), a line that names
      its owner, as the whole line or as one of its names (case, accents and
      punctuation folded), is an author list whatever it looks like: ``yoav
      freund.`` on yoav freund.'s page, a site's name that an index prints for the
      authors of every paper on the page it keeps for that site.

    One call where a parser would ask ``looks_like_authors`` and then split the
    same line again.
    """
    if len(line) > 2000 or not line:
        return None
    read = _read_names(line)
    if read is None and owner:
        return _naming(line, owner)
    return read


def _naming(line: str, owner: str) -> tuple[list[str], bool] | None:
    """``split_authors(line)`` if the line names ``owner`` (``read_authors``'s last rule)."""
    key, folded = name_key(decode_entities(owner)), name_key(decode_entities(line))
    if not key or key not in folded:  # most lines do not hold the name: no split
        return None
    names, truncated = split_authors(line)
    if folded == key or any(name_key(name) == key for name in names):
        return names or [line.strip().rstrip(".")], truncated
    return None


def _read_names(line: str) -> tuple[list[str], bool] | None:
    """``read_authors`` without an owner."""
    names, truncated, closing = _read_line(line)
    if truncated:
        if not line.rstrip().endswith(("…", "...")):
            return names, True  # "et al.": names, whatever they look like
        if holds_function_words(names):
            return None
    if not names or line.endswith(("!", "?")):
        return None
    if closing and (len(names) < 2 or closing == ":") and not any(map(_shows_name, names)):
        return None  # "Deep Learning.", "Keywords:": a short sentence, a title, a label
    cased = any(map(str.isupper, "".join(names)))
    if cased and closing and not all(map(_strictly_cased_name, names)):
        return None  # "We compare BERT, GPT and T5."
    if not all(map(_cased_name if cased else _caseless_name, names)):
        return None
    if not cased and not (any(map(_shows_name, names))
                          or (len(names) > 2 and all(2 <= len(n.split()) <= 3 for n in names))):
        return None
    return names, truncated


def holds_function_words(names: list[str]) -> bool:
    """Does a name hold "of", "the", "for"...? A title's words, not a person's."""
    return any(not _FUNCTION_WORDS.isdisjoint(name.split()) for name in names)


def _cased_name(name: str) -> bool:
    """A name's words are capitalised, save particles (van, de, al-) and initials, and
    none but the last ends a sentence."""
    words = name.split()
    if not 1 <= len(words) <= 6 or any(map(_ends_sentence, words, words[1:])):
        return False
    return sum(word[:1].isupper() for word in words) >= max(1, len(words) - 2)


def _ends_sentence(word: str, next_word: str) -> bool:
    """"Standards. In" does; "J.", "St.", "Jr.", "r.e." and "Univ. of" do not."""
    stem = word[:-1]
    return (word.endswith(".") and len(stem) >= 4 and "." not in stem and not _suffix(word)
            and next_word[:1].isupper())


def _strictly_cased_name(name: str) -> bool:
    """Every word capitalised, an initial, a particle (van, de) or a suffix."""
    return all(word[:1].isupper() or word in PARTICLES or INITIALS.fullmatch(word)
               or _suffix(word) for word in name.replace(",", " ").split())


def _caseless_name(name: str) -> bool:
    words = name.replace(",", " ").split()
    return 1 <= len(words) <= 4 and all(
        word.translate(_NAME_PUNCTUATION).isalpha() and word not in _FUNCTION_WORDS
        for word in words)


def _shows_name(name: str) -> bool:
    """Initials or a surname-first comma: what titles and labels do not have."""
    return "," in name or any(map(INITIALS.fullmatch, name.split()))
