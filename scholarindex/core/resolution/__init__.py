"""Work resolution: which atoms (work_ids) are one paper.

A pure core (no I/O): ``resolve`` partitions a set of atoms into works through
blocking (``blocking.candidate_pairs``), one pairwise rule (``decide.decide``)
and clustering that does not chain weak links (``cluster.resolve``). Each module
states its rule and thresholds in its docstring; ``docs/resolution.md`` gives the
whole picture and the measured figures.
"""

from scholarindex.core.resolution.blocking import candidate_pairs
from scholarindex.core.resolution.clean import clean_title
from scholarindex.core.resolution.cluster import resolve
from scholarindex.core.resolution.decide import decide
from scholarindex.core.resolution.generic import is_generic_title
from scholarindex.core.resolution.model import Atom, Decision, Link, Resolution

__all__ = ["Atom", "Decision", "Link", "Resolution", "candidate_pairs", "clean_title", "decide",
           "is_generic_title", "resolve"]
