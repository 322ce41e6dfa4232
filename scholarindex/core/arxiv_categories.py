"""arXiv category codes and their names, for display.

Documents and facets keep the codes (``cs.LG``); a page shows the name beside
them. Every category of the Computer Science archive is here, plus the other
codes the crawled papers carry; a code not listed reads as itself.
"""

from __future__ import annotations

import re

ARXIV_CATEGORY_NAMES: dict[str, str] = {
    "cs.AI": "Artificial Intelligence",
    "cs.AR": "Hardware Architecture",
    "cs.CC": "Computational Complexity",
    "cs.CE": "Computational Engineering, Finance, and Science",
    "cs.CG": "Computational Geometry",
    "cs.CL": "Computation and Language",
    "cs.CR": "Cryptography and Security",
    "cs.CV": "Computer Vision and Pattern Recognition",
    "cs.CY": "Computers and Society",
    "cs.DB": "Databases",
    "cs.DC": "Distributed, Parallel, and Cluster Computing",
    "cs.DL": "Digital Libraries",
    "cs.DM": "Discrete Mathematics",
    "cs.DS": "Data Structures and Algorithms",
    "cs.ET": "Emerging Technologies",
    "cs.FL": "Formal Languages and Automata Theory",
    "cs.GL": "General Literature",
    "cs.GR": "Graphics",
    "cs.GT": "Computer Science and Game Theory",
    "cs.HC": "Human-Computer Interaction",
    "cs.IR": "Information Retrieval",
    "cs.IT": "Information Theory",
    "cs.LG": "Machine Learning",
    "cs.LO": "Logic in Computer Science",
    "cs.MA": "Multiagent Systems",
    "cs.MM": "Multimedia",
    "cs.MS": "Mathematical Software",
    "cs.NA": "Numerical Analysis",
    "cs.NE": "Neural and Evolutionary Computing",
    "cs.NI": "Networking and Internet Architecture",
    "cs.OH": "Other Computer Science",
    "cs.OS": "Operating Systems",
    "cs.PF": "Performance",
    "cs.PL": "Programming Languages",
    "cs.RO": "Robotics",
    "cs.SC": "Symbolic Computation",
    "cs.SD": "Sound",
    "cs.SE": "Software Engineering",
    "cs.SI": "Social and Information Networks",
    "cs.SY": "Systems and Control",
    "eess.AS": "Audio and Speech Processing",
    "eess.IV": "Image and Video Processing",
    "eess.SP": "Signal Processing",
    "eess.SY": "Systems and Control",
    "math.CO": "Combinatorics",
    "math.IT": "Information Theory",
    "math.OC": "Optimization and Control",
    "math.ST": "Statistics Theory",
    "stat.AP": "Applications",
    "stat.CO": "Computation",
    "stat.ME": "Methodology",
    "stat.ML": "Machine Learning",
    "stat.TH": "Statistics Theory",
}


def category_name(code: str) -> str | None:
    """The name of an arXiv category code (``cs.LG`` -> "Machine Learning"), or None."""
    return ARXIV_CATEGORY_NAMES.get(code)


def category_label(code: str) -> str:
    """How a category reads on a page: "Machine Learning (cs.LG)", or the code as it is."""
    name = category_name(code)
    return f"{name} ({code})" if name else code


# --- OAI-PMH sets ---------------------------------------------------------------------
# arXiv's OAI sets name a group, an archive of it, or a subject class of an archive:
# "cs", "physics:hep-th", "cs:cs:LG", "physics:astro-ph:EP". The archives of every group
# but physics are named as their group.
OAI_GROUPS = frozenset({"cs", "econ", "eess", "math", "physics", "q-bio", "q-fin", "stat"})
PHYSICS_ARCHIVES = frozenset({
    "astro-ph", "cond-mat", "gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th", "math-ph", "nlin",
    "nucl-ex", "nucl-th", "physics", "quant-ph"})
_SUBJECT_CLASS = re.compile(r"^[A-Za-z][A-Za-z-]*$")


def oai_set_of(category: str) -> str | None:
    """The OAI set of a category or archive: ``cs.LG`` -> ``cs:cs:LG``, ``hep-th`` ->
    ``physics:hep-th``, ``astro-ph.EP`` -> ``physics:astro-ph:EP``, ``math`` -> ``math``;
    None for a name arXiv has no set for."""
    archive, _, subject = category.partition(".")
    group = "physics" if archive in PHYSICS_ARCHIVES else archive
    if group not in OAI_GROUPS or (subject and not _SUBJECT_CLASS.match(subject)):
        return None
    if not subject:
        return archive if archive in OAI_GROUPS else f"{group}:{archive}"
    return f"{group}:{archive}:{subject}"


def is_oai_set(spec: str) -> bool:
    """Whether ``spec`` is shaped as one of arXiv's OAI sets (group[:archive[:SUBJECT]])."""
    parts = spec.split(":")
    if parts[0] not in OAI_GROUPS or len(parts) > 3:
        return False
    if len(parts) >= 2:
        archives = PHYSICS_ARCHIVES if parts[0] == "physics" else {parts[0]}
        if parts[1] not in archives:
            return False
    return len(parts) < 3 or bool(_SUBJECT_CLASS.match(parts[2]))
