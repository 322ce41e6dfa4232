"""The values work resolution reads and returns (see ``scholarindex.core.resolution``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


@dataclass(frozen=True)
class Atom:
    """The evidence of one work_id, aggregated over the listings that share it.

    Text fields are as printed (untrusted: they may hold HTML entities, mojibake,
    LaTeX); resolution cleans them itself.
    """

    work_id: str
    titles: tuple[str, ...]
    authors: tuple[str, ...] = ()  # printed author names (layout A prints none)
    authors_truncated: bool = False  # some listing's author list ended in "et al."
    owners: tuple[str, ...] = ()  # the profile owners' names (each listing's researcher_name)
    years: tuple[int, ...] = ()
    venues: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    strong_keys: tuple[str, ...] = ()  # verified "arxiv:<id>" / "doi:<doi>"
    profiles: tuple[str, ...] = ()  # the researcher_ids of the profiles that list it


class Strength(Enum):
    """How far a match carries in clustering (``cluster``'s steps)."""

    WEAK = "weak"  # joins only as the mutual best of both sides (step 3c)
    STRONG = "strong"  # may chain (step 3b)
    KEY = "key"  # a verified arXiv id or DOI in common: strong, and an identity
    GENERIC = "generic"  # a generic title with author evidence: never vouches alone
    MANUAL = "manual"  # joined by hand (ops' must-link)

    @property
    def chains(self) -> bool:
        return self in (Strength.STRONG, Strength.KEY)

    @property
    def tag(self) -> tuple[str, ...]:
        """What a stored link's evidence starts with (its readers, ``works review``
        and the API, show it as is)."""
        return _TAGS.get(self, ())


_TAGS = {Strength.STRONG: ("strong",), Strength.KEY: ("strong",),
         Strength.GENERIC: ("generic title",)}


@dataclass(frozen=True)
class Decision:
    """Whether two atoms are one work, how strongly, and the evidence read."""

    match: bool
    score: float
    reasons: tuple[str, ...]
    # The evidence forbids ever joining these two, whatever links them indirectly
    # (different verified keys, an owner missing from a complete author list).
    conflict: bool = False
    strength: Strength = Strength.WEAK
    # Judged apart on the titles' wording alone (``decide`` rules 2, 8 and 9 ending apart):
    # what a printing's damage does too. Apart on a year, a kind of contribution, a
    # generic title or one profile's entries is not (``cluster``, step 3c).
    on_wording: bool = False

    @property
    def evidence(self) -> tuple[str, ...]:
        """What a link records: the strength's tag, then the reasons."""
        return self.strength.tag + self.reasons


@dataclass(frozen=True)
class Link:
    """Why an atom joined its cluster: the atom it joined and that decision's score."""

    to: str
    score: float
    evidence: tuple[str, ...]
    strength: Strength = Strength.WEAK


@dataclass(frozen=True)
class Resolution:
    """The partition of the atoms into works.

    ``clusters``: the work_ids of each work, each tuple sorted, the list sorted
    (singletons included). ``links``: for every atom that is not its cluster's
    smallest work_id, the link that joined it, leading towards that smallest one.
    """

    clusters: list[tuple[str, ...]]
    links: dict[str, Link] = field(default_factory=dict)
