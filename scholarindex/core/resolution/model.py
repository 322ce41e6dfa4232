"""The values work resolution reads and returns (see ``scholarindex.core.resolution``)."""

from __future__ import annotations

from dataclasses import dataclass, field


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


@dataclass(frozen=True)
class Decision:
    """Whether two atoms are one work, how strongly, and the evidence read."""

    match: bool
    score: float
    evidence: tuple[str, ...]
    # The evidence forbids ever joining these two, whatever links them indirectly
    # (different verified keys, an owner missing from a complete author list).
    conflict: bool = False


@dataclass(frozen=True)
class Link:
    """Why an atom joined its cluster: the atom it joined and that decision's score."""

    to: str
    score: float
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Resolution:
    """The partition of the atoms into works.

    ``clusters``: the work_ids of each work, each tuple sorted, the list sorted
    (singletons included). ``links``: for every atom that is not its cluster's
    smallest work_id, the link that joined it, leading towards that smallest one.
    """

    clusters: list[tuple[str, ...]]
    links: dict[str, Link] = field(default_factory=dict)
