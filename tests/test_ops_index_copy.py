"""The index copy's bulk writes: transient failures retried (core.retry), others not."""

from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from scholarindex.core.retry import RetryPolicy
from scholarindex.indexing.errors import IndexUnavailable
from scholarindex.ops import index_copy


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_copy, "_BULK_RETRY",
                        RetryPolicy(attempts=4, initial_wait=0, max_wait=0, jitter=0))


class FlakyBulk:
    """Stands in for ``helpers.streaming_bulk``: fails with the given errors, then writes."""

    def __init__(self, failures: list[IndexUnavailable]) -> None:
        self.failures = failures
        self.calls = 0

    def streaming_bulk(self, client: object, actions: Iterable[dict], **options: Any
                       ) -> Iterator[tuple[bool, dict]]:
        self.calls += 1
        for action in actions:
            if self.failures:
                raise self.failures.pop(0)
            yield True, {"index": {"_id": action["_id"], "status": 201}}


def failing(monkeypatch: pytest.MonkeyPatch, failures: list[IndexUnavailable]) -> FlakyBulk:
    flaky = FlakyBulk(failures)
    monkeypatch.setattr(index_copy, "helpers", flaky)
    return flaky


def write(actions: list[dict]) -> list[dict]:
    return list(index_copy.bulk_write(None, actions, "copy", 10))  # type: ignore[arg-type]


def test_a_transient_failure_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    busy = IndexUnavailable("bulk: HTTP 429", retryable=True, status=429)
    flaky = failing(monkeypatch, [busy, busy, busy])
    assert write([{"_id": "a"}, {"_id": "b"}]) == [{"_id": "a"}, {"_id": "b"}]
    assert flaky.calls == 4


def test_it_gives_up_after_four_tries(monkeypatch: pytest.MonkeyPatch) -> None:
    busy = IndexUnavailable("bulk: HTTP 503", retryable=True, status=503)
    flaky = failing(monkeypatch, [busy] * 4)
    with pytest.raises(IndexUnavailable, match="503"):
        write([{"_id": "a"}])
    assert flaky.calls == 4


def test_a_refusal_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    denied = IndexUnavailable("bulk: HTTP 403", retryable=False, status=403)
    flaky = failing(monkeypatch, [denied])
    with pytest.raises(IndexUnavailable, match="403"):
        write([{"_id": "a"}])
    assert flaky.calls == 1
