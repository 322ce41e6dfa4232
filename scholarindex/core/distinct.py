"""Count distinct values (work ids, written documents) in bounded memory.

Exact while small: a set of 64-bit ints (about 60 bytes each). Past ``exact_limit``
values it switches to a HyperLogLog with 2**14 one-byte registers (16 KB, about
0.8% standard error), so a crawl of millions of works keeps memory flat. The
report says which one it gave (``exact``). The five seed pages need an exact 25;
a crawl big enough to switch needs a trend, not the last unit.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable

_P = 14
_M = 1 << _P
_ALPHA = 0.7213 / (1 + 1.079 / _M)


class DistinctCounter:
    """How many distinct strings were added; exact up to ``exact_limit``."""

    def __init__(self, exact_limit: int = 100_000) -> None:
        self.exact_limit = exact_limit
        self._exact: set[int] | None = set()
        self._registers = bytearray()

    @property
    def exact(self) -> bool:
        return self._exact is not None

    def add(self, value: str) -> None:
        self.add_many((value,))

    def add_many(self, values: Iterable[str]) -> None:
        """``add`` each value: a page's works, a flush's documents, in one call."""
        # A value's hash: the first 64 bits of its BLAKE2b. Bound once: this runs for every
        # work of every page and every document of every flush, on the reactor thread.
        blake2b, from_bytes = hashlib.blake2b, int.from_bytes
        for value in values:
            h = from_bytes(blake2b(value.encode(), digest_size=8).digest(), "big")
            if self._exact is not None:
                self._exact.add(h)
                if len(self._exact) > self.exact_limit:
                    self._switch()
            else:
                self._add_hash(h)

    def _switch(self) -> None:
        assert self._exact is not None
        self._registers = bytearray(_M)
        for h in self._exact:
            self._add_hash(h)
        self._exact = None

    def _add_hash(self, h: int) -> None:
        index = h >> (64 - _P)
        rest = h & ((1 << (64 - _P)) - 1)
        rank = (64 - _P) - rest.bit_length() + 1  # position of the first 1 bit
        if rank > self._registers[index]:
            self._registers[index] = rank

    def __len__(self) -> int:
        if self._exact is not None:
            return len(self._exact)
        estimate = _ALPHA * _M * _M / sum(2.0 ** -r for r in self._registers)
        zeros = self._registers.count(0)
        if estimate <= 2.5 * _M and zeros:  # small-range correction: linear counting
            estimate = _M * math.log(_M / zeros)
        return round(estimate)
