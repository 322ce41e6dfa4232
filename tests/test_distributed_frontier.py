"""The shared frontier's operations on a real redis-server: push and the seen-set, take with
a lease, ack, expired leases coming back, release, the job rule, and ``scholarindex status``."""

from __future__ import annotations

import time
from pathlib import Path

from scholarindex.distributed.connection import RedisConfig, RedisLink
from scholarindex.distributed.frontier import Frontier
from scholarindex.distributed.jobs import definition_digest, finish, heartbeat, join
from scholarindex.distributed.keys import JobKeys
from scholarindex.indexing.connection import OpenSearchConfig
from tests.support.ops import cli_env, json_out, run_cli
from tests.support.redis import RedisServer

KEYS = JobKeys("t:", "job")


def frontier(server: RedisServer, worker: str, lease: float = 5.0) -> Frontier:
    return Frontier(RedisLink(server.url, 5), KEYS, worker, lease, max_deliveries=2)


def test_push_dedups_take_leases_ack_removes(redis_server: RedisServer) -> None:
    a = frontier(redis_server, "a")
    assert join(a.link, KEYS, "def").outcome == "started"
    assert a.push([("f1", b"r1", False), ("f2", b"r2", False), ("f1", b"again", False)]) == 2
    assert a.push([("f1", b"r1", False)]) == 0  # seen this run
    taken = a.take(1)
    assert taken.requests == [("f1", b"r1")]
    state = a.state()
    assert (state.queued, state.leased, state.idle) == (1, 1, False)
    assert a.ack(["f1"]) == 1
    assert a.take(5).requests == [("f2", b"r2")]
    a.ack(["f2"])
    a.mark_seeded()
    assert a.state().idle
    assert finish(a.link, KEYS, join(a.link, KEYS, "def").run_id)


def test_an_expired_lease_goes_back_to_the_front_and_a_stale_owner_cannot_renew(
        redis_server: RedisServer) -> None:
    dead, alive = frontier(redis_server, "dead", lease=0.2), frontier(redis_server, "alive")
    join(dead.link, KEYS, "def")
    dead.push([("f1", b"r1", False), ("f2", b"r2", False)])
    assert [fp for fp, _ in dead.take(1).requests] == ["f1"]
    time.sleep(0.3)
    taken = alive.take(1)
    assert taken.reclaimed == 1 and [fp for fp, _ in taken.requests] == ["f1"]
    assert dead.renew(["f1"]) == 0 and alive.renew(["f1"]) == 1


def test_release_puts_back_unfinished_and_too_many_takes_set_aside(
        redis_server: RedisServer) -> None:
    # Leases of 0.5 s: shorter ones expire or restart (a silence of a whole lease) on
    # a loaded machine between two calls of the test itself.
    a = frontier(redis_server, "a", lease=0.5)
    join(a.link, KEYS, "def")
    a.push([("f1", b"r1", False)])
    a.take(1)
    assert a.release(["f1"]) == 1  # a drain: not counted as a delivery
    for _ in range(2):
        assert a.take(1).requests
        about(a, 0.7)
    assert a.take(1).requests == []  # the third take: set aside
    assert a.state().dead == 1


def about(worker: Frontier, seconds: float, holding: tuple[str, ...] = ()) -> None:
    """A worker alive for ``seconds``, renewing what it holds, as its upkeep does."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        worker.renew(holding)
        time.sleep(0.02)


def test_after_a_silence_of_a_whole_lease_leases_start_afresh_instead_of_expiring(
        redis_server: RedisServer) -> None:
    # No worker reached Redis for longer than a lease (Redis restarting): the holder
    # had no chance to renew, so its lease is not taken from it.
    holder, other = frontier(redis_server, "holder", 0.3), frontier(redis_server, "other", 0.3)
    join(holder.link, KEYS, "def")
    holder.push([("f1", b"r1", False), ("f2", b"r2", False)])
    assert [fp for fp, _ in holder.take(1).requests] == ["f1"]
    time.sleep(0.5)  # silence
    taken = other.take(1)
    assert taken.reclaimed == 0 and [fp for fp, _ in taken.requests] == ["f2"]
    assert holder.renew(["f1"]) == 1
    # A holder that then stays silent while others go on loses it a lease later.
    about(other, 0.45, holding=("f2",))
    assert other.take(1).reclaimed == 1


def test_the_job_rule_same_definition_joins_another_is_refused_finished_restarts(
        redis_server: RedisServer) -> None:
    link = RedisLink(redis_server.url, 5)
    first = join(link, KEYS, definition_digest(["u1", "u2"], False))
    assert first.outcome == "started"
    again = join(link, KEYS, definition_digest(["u2", "u1"], False))
    assert (again.outcome, again.run_id) == ("joined", first.run_id)
    assert join(link, KEYS, definition_digest(["u1"], False)).refused
    assert join(link, KEYS, definition_digest(["u1", "u2"], True)).refused
    link.client.hset(KEYS.record, "seeded", "1")
    assert finish(link, KEYS, first.run_id)
    nxt = join(link, KEYS, definition_digest(["u1"], False))
    assert nxt.outcome == "started" and nxt.run_id != first.run_id


def test_status_shows_running_jobs_with_workers_queue_and_leases(
        redis_server: RedisServer, indexed: OpenSearchConfig, tmp_path: Path) -> None:
    a = frontier(redis_server, "host-a:1:x")
    join(a.link, KEYS, "def")
    a.push([(f"f{i}", b"r", False) for i in range(5)])
    a.take(2)
    a.ack(["f0"])
    heartbeat(a.link, KEYS, a.worker, 30, {"host": "host-a", "pid": 1})
    env = cli_env(indexed, INDEX_DEADLETTER_PATH=tmp_path / "none.jsonl",
                  REDIS_URL=redis_server.url, REDIS_KEY_PREFIX="t:")
    result = run_cli(["status", "--json"], env)
    assert result.exit_code == 0, result.output
    (job,) = json_out(result)["distributed"]["jobs"]
    assert (job["name"], job["state"], job["queued"], job["leased"]) == ("job", "running", 3, 1)
    assert job["workers"] == [{"worker": "host-a:1:x", "host": "host-a", "pid": 1,
                               "pages_done": 1}]
    text = run_cli(["status"], env).output
    assert "job job: running" in text and "3 queued, 1 leased" in text


def test_status_without_redis_url_has_no_distributed_section(
        indexed: OpenSearchConfig, tmp_path: Path) -> None:
    env = cli_env(indexed, INDEX_DEADLETTER_PATH=tmp_path / "none.jsonl")
    assert json_out(run_cli(["status", "--json"], env))["distributed"] is None


def test_redis_config_reads_the_settings() -> None:
    config = RedisConfig.from_settings({"REDIS_URL": "redis://u:secret@h:1/0",
                                        "REDIS_KEY_PREFIX": "p:", "REDIS_LEASE_SECONDS": "9",
                                        "REDIS_RETRY_SECONDS": "3"})
    assert config.lease_seconds == 9.0 and "secret" not in config.safe_url


def test_a_worker_that_joined_a_run_finished_since_does_not_start_it_again(
        redis_server: RedisServer) -> None:
    link = RedisLink(redis_server.url, 5)
    first = join(link, KEYS, "def")
    link.client.hset(KEYS.record, "seeded", "1")
    assert finish(link, KEYS, first.run_id)
    late = join(link, KEYS, "def", joined_run=first.run_id)
    assert (late.outcome, late.run_id) == ("finished", first.run_id)
    assert link.client.hget(KEYS.record, "state") == b"finished"
    assert join(link, KEYS, "def").outcome == "started"  # a new process: the next run


def test_a_page_parsed_before_its_worker_died_is_not_counted_towards_setting_it_aside(
        redis_server: RedisServer) -> None:
    a = frontier(redis_server, "a", lease=0.5)  # max_deliveries=2; 0.5 s: as above
    join(a.link, KEYS, "def")
    a.push([("f1", b"r1", False), ("f2", b"r2", False)])
    for _ in range(4):  # four workers in turn parse f1 and die before its delivery
        assert [fp for fp, _ in a.take(1).requests] == ["f1"]
        a.renew(["f1"], parsed=["f1"])
        about(a, 0.7)  # the lease expires: f1 goes back to the front of the queue
    assert [fp for fp, _ in a.take(1).requests] == ["f1"]
    assert a.state().dead == 0
    b = frontier(redis_server, "b")
    assert b.renew([], parsed=["f1"]) == 0  # not b's lease: counted still
    deliveries = a.link.client.hget(KEYS.deliveries, "f1")
    assert deliveries is not None and int(deliveries) == 1
    assert a.ack(["f1"]) == 1
    a.renew([], parsed=["f1"])  # acknowledged meanwhile: no count left behind
    assert a.link.client.hget(KEYS.deliveries, "f1") is None


def test_a_page_handed_off_is_acknowledged_and_its_items_adopted_once_its_worker_died(
        redis_server: RedisServer) -> None:
    from scholarindex.distributed.jobs import heartbeat
    from scholarindex.distributed.outbox import Outbox, entry, items_of

    a, b = frontier(redis_server, "a"), frontier(redis_server, "b")  # max_deliveries=2
    join(a.link, KEYS, "def")
    a.push([("f1", b"r1", False), ("f2", b"r2", False)])
    a.mark_seeded()
    assert [fp for fp, _ in a.take(2).requests] == ["f1", "f2"]
    heartbeat(a.link, KEYS, "a", 0.05, {})
    heartbeat(b.link, KEYS, "b", 60, {})
    assert a.hand_off([("f1", entry("http://site/1", [{"kind": "page", "n": 1}]))]) == 1
    outbox_a = Outbox(a.link, KEYS, "a", 2, grace_seconds=0)
    outbox_b = Outbox(b.link, KEYS, "b", 2, grace_seconds=0)
    assert outbox_a.held() == {"f1"}
    assert a.state().leased == 1  # f1's lease is gone; f2 was only taken
    assert int(a.link.client.hget(KEYS.done, "a") or 0) == 1
    time.sleep(0.1)  # a dies: its heartbeat lapses
    alive, adopted = outbox_b.adopt()
    assert alive == 0 and list(adopted) == ["f1"]
    assert items_of(adopted["f1"]) == [{"kind": "page", "n": 1}]
    assert outbox_a.held() == set() and outbox_b.held() == {"f1"}
    assert outbox_b.adopt() == (0, {})  # adopted once
    outbox_b.delivered(["f1"])
    assert outbox_b.held() == set() and a.link.client.hlen(KEYS.adoptions) == 0


def test_items_that_kill_every_worker_that_adopts_them_are_set_aside(
        redis_server: RedisServer) -> None:
    from scholarindex.distributed.jobs import heartbeat
    from scholarindex.distributed.outbox import Outbox, entry

    a = frontier(redis_server, "w0")
    join(a.link, KEYS, "def")
    a.push([("f1", b"r1", False)])
    a.take(1)
    a.hand_off([("f1", entry("http://site/1", ["poison"]))])
    for n in range(1, 4):  # each adopter dies before delivering (max adoptions: 2)
        heartbeat(a.link, KEYS, f"w{n - 1}", 0.05, {})
        heartbeat(a.link, KEYS, f"w{n}", 60, {})
        time.sleep(0.1)
        _, adopted = Outbox(a.link, KEYS, f"w{n}", 2, grace_seconds=0).adopt()
        assert list(adopted) == (["f1"] if n <= 2 else [])
    assert a.state().dead == 1 and Outbox(a.link, KEYS, "w3", 2).held() == set()


def test_an_outbox_is_adopted_only_past_the_grace_and_a_part_at_a_time(
        redis_server: RedisServer) -> None:
    from scholarindex.distributed.jobs import heartbeat
    from scholarindex.distributed.outbox import Outbox, entry

    a = frontier(redis_server, "a")
    join(a.link, KEYS, "def")
    a.push([(f"f{n}", b"r", False) for n in range(5)])
    a.take(5)
    a.hand_off([(f"f{n}", entry(f"http://site/{n}", [n])) for n in range(5)])
    heartbeat(a.link, KEYS, "a", 0.05, {})
    heartbeat(a.link, KEYS, "b", 60, {})
    time.sleep(0.1)  # a's heartbeat lapsed, but a starved worker may yet renew it
    patient = Outbox(a.link, KEYS, "b", 5, grace_seconds=30)
    assert patient.adopt() == (1, {})  # held: the job is not done for b
    b = Outbox(a.link, KEYS, "b", 5, grace_seconds=0)
    holding, adopted = b.adopt(limit=2)
    assert holding == 1 and len(adopted) == 2  # the rest is left for the next call
    assert b.adopt(limit=0) == (1, {})
    holding, adopted = b.adopt(limit=10)
    assert holding == 0 and len(adopted) == 3 and len(b.held()) == 5
