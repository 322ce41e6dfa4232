"""Why pairs were missed or wrongly joined: each counted by what decided it.

    python -m bench.er.evaluate --data dblp-acm --why

For every gold pair the resolved works split (missed) and every pair they join
that the gold does not (wrong), the reason, counted in pairs:

* ``lost by the parser``: a record no listing stands for;
* ``one work_id``: both records' listings share a ``work_id`` (an atom, never split);
* ``not a candidate``: blocking never proposed the two atoms;
* ``judged apart: <evidence>`` / ``judged alike: <evidence>``: ``decide``'s verdict
  on the two atoms, its evidence with the figures left out;
* ``judged alike, not joined``: ``decide`` matched them but clustering did not join
  them (a cannot-link between their groups, a tie, not mutual best);
* ``joined through others``: the two were never compared, or were judged apart, and
  a chain of other links joined them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from scholarindex.core.resolution import Atom, Decision, decide

_FIGURES = re.compile(r"\s*\d+(?:\.\d+)?")


def _verdict(decision: Decision) -> str:
    said = "judged alike" if decision.match else "judged apart"
    evidence = (_FIGURES.sub("", piece).strip() for piece in decision.evidence)
    return f"{said}: {' / '.join(evidence)}"


def explain(atoms: list[Atom], atom_of: dict[str, int], candidates: Iterable[tuple[int, int]],
            missed: Iterable[tuple[str, str]], wrong: Iterable[tuple[str, str]]
            ) -> dict[str, Counter[str]]:
    """Reasons for the ``missed`` and ``wrong`` record pairs (see the module doc);
    ``atom_of``: record key -> index of its atom in ``atoms``; ``candidates``: blocking's
    pairs of atom indices."""
    proposed = {frozenset(pair) for pair in candidates}
    decided: dict[frozenset[int], Decision] = {}

    def reason(a: str, b: str, joined: bool) -> str:
        i, j = atom_of.get(a), atom_of.get(b)
        if i is None or j is None:
            return "lost by the parser"
        if i == j:
            return "one work_id"
        pair = frozenset((i, j))
        if pair not in proposed:
            return "joined through others" if joined else "not a candidate"
        if pair not in decided:
            decided[pair] = decide(atoms[i], atoms[j])
        decision = decided[pair]
        if not joined and decision.match:
            return "judged alike, not joined"
        if joined and not decision.match:
            return "joined through others"
        return _verdict(decision)

    return {"missed": Counter(reason(a, b, False) for a, b in missed),
            "wrong": Counter(reason(a, b, True) for a, b in wrong)}
