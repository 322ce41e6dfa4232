"""Exit statuses shared by ``scrapy crawl`` and ``scholarindex``, so one scheduler rule fits both.

====  =====================================================================
0     ok
1     failed: the run or command ran and did not succeed
2     usage: bad options, no URLs, or a destructive step not confirmed
3     a dependency (OpenSearch, arXiv) was unavailable
4     data lost: documents went to the dead-letter file (replay them)
75    another run of the same job holds the lock (EX_TEMPFAIL: try later)
====  =====================================================================
"""

from __future__ import annotations

from collections.abc import Iterable

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3
EXIT_DATA_LOST = 4
EXIT_ALREADY_RUNNING = 75

# Which status wins when several problems apply, most severe first.
SEVERITY = (EXIT_ALREADY_RUNNING, EXIT_UNAVAILABLE, EXIT_DATA_LOST, EXIT_USAGE, EXIT_FAILED)

HELP = ("Exit status: 0 ok, 1 failed, 2 usage or not confirmed, 3 OpenSearch or arXiv "
        "unavailable, 4 documents dead-lettered, 75 already running.")


def most_severe(codes: Iterable[int]) -> int:
    """The exit status to report when several problems apply (0 when none)."""
    found = [code for code in codes if code != EXIT_OK]
    if not found:
        return EXIT_OK
    return min(found, key=lambda code: SEVERITY.index(code) if code in SEVERITY else len(SEVERITY))
