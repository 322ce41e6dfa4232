"""DistinctCounter: values added one at a time or many at once count the same."""

from __future__ import annotations

from scholarindex.core.distinct import DistinctCounter


def test_add_many_is_add_one_at_a_time_exact_and_estimated() -> None:
    values = [f"works/{i % 1500:016x}" for i in range(3000)]
    one, many = DistinctCounter(exact_limit=1000), DistinctCounter(exact_limit=1000)
    for value in values[:900]:
        one.add(value)
    many.add_many(values[:900])
    assert one.exact and many.exact and len(one) == len(many) == 900
    for value in values[900:]:
        one.add(value)
    many.add_many(iter(values[900:]))
    assert not one.exact and not many.exact  # past the limit: the same estimate
    assert one._registers == many._registers and len(one) == len(many)
    assert abs(len(many) - 1500) / 1500 < 0.05
