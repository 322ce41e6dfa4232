"""The index copy's bulk writes: transient failures retried (core.retry), others not."""

import pytest

from core.retry import RetryPolicy
from indexing.errors import IndexUnavailable
from ops import index_copy


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_copy, "_BULK_RETRY",
                        RetryPolicy(attempts=4, initial_wait=0, max_wait=0, jitter=0))


def failing(monkeypatch: pytest.MonkeyPatch, failures: list[IndexUnavailable]) -> list[int]:
    calls: list[int] = []

    def send(client: object, actions: list, what: str) -> list:
        calls.append(1)
        if failures:
            raise failures.pop(0)
        return [(True, {"index": {"_id": a["_id"], "status": 201}}) for a in actions]

    monkeypatch.setattr(index_copy, "_send_bulk", send)
    return calls


def test_a_transient_failure_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    busy = IndexUnavailable("bulk: HTTP 429", retryable=True, status=429)
    calls = failing(monkeypatch, [busy, busy, busy])
    index_copy.bulk_write(None, [{"_id": "a"}], "copy")  # type: ignore[arg-type]
    assert len(calls) == 4


def test_it_gives_up_after_four_tries(monkeypatch: pytest.MonkeyPatch) -> None:
    busy = IndexUnavailable("bulk: HTTP 503", retryable=True, status=503)
    calls = failing(monkeypatch, [busy] * 4)
    with pytest.raises(IndexUnavailable, match="503"):
        index_copy.bulk_write(None, [{"_id": "a"}], "copy")  # type: ignore[arg-type]
    assert len(calls) == 4


def test_a_refusal_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    denied = IndexUnavailable("bulk: HTTP 403", retryable=False, status=403)
    calls = failing(monkeypatch, [denied])
    with pytest.raises(IndexUnavailable, match="403"):
        index_copy.bulk_write(None, [{"_id": "a"}], "copy")  # type: ignore[arg-type]
    assert len(calls) == 1
