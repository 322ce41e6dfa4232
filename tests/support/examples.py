"""How many examples a property test over a real node runs.

Each example of such a test writes to the node and runs passes, seconds apiece: the
suite runs a few, `make soak-properties` many (``PROPERTY_EXAMPLES_FACTOR`` times as
many), since a rare interleaving shows only over many examples.
"""

from __future__ import annotations

import os

FACTOR = "PROPERTY_EXAMPLES_FACTOR"


def examples(in_suite: int) -> int:
    """``in_suite``, times the factor the environment sets (1 if unset)."""
    return in_suite * max(1, int(os.environ.get(FACTOR) or 1))
