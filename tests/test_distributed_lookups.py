"""arXiv lookups a killed worker had outstanding are not lost (real redis-server, real
``scrapy crawl`` processes, the stand-in arXiv API, an OpenSearch node for the index).

A page is acknowledged once its items are in the index; the arXiv answers for its works
come later. A worker killed in between took those lookups with it: nobody redid the
acknowledged page, and its works stayed ``pending`` in the index. Now the worker keeps
them in Redis, and the worker that finds it dead looks them up.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from opensearchpy import OpenSearch

from bench.arxiv import IndexedArxivStandIn
from bench.generate import load_entries
from crawler.distributed.lookupbook import LookupBook, queued_works
from scholarindex.indexing.connection import OpenSearchConfig
from tests.support.distributed import bench_site, start_worker, wait_until
from tests.support.index_contents import snapshot
from tests.support.redis import RedisServer

PROFILES = 10


def worker_settings(config: OpenSearchConfig, api_url: str, cache: Path) -> dict[str, str]:
    return {"INDEX_ENABLED": "true", "OPENSEARCH_URL": config.url,
            "INDEX_PREFIX": config.prefix, "INDEX_FLUSH_INTERVAL": "0.5",
            "ARXIV_ENABLED": "true", "ARXIV_API_URL": api_url, "ARXIV_DELAY_SECONDS": "0.05",
            "ARXIV_BATCH_LINGER_SECONDS": "0.3",
            "ARXIV_CACHE_DIR": str(cache),
            # One page at a time: the kill lands after a chosen number of acknowledgements.
            "CONCURRENT_REQUESTS_PER_DOMAIN": "1", "DOWNLOAD_DELAY": "0.3"}


@pytest.mark.process
@pytest.mark.slow
@pytest.mark.parametrize("acked_before_kill", [1, PROFILES // 2, PROFILES])
def test_lookups_of_a_worker_killed_after_acknowledging_its_pages_are_done_by_another(
        tmp_path: Path, redis_server: RedisServer, opensearch_config: OpenSearchConfig,
        acked_before_kill: int) -> None:
    site = bench_site(tmp_path / "site", PROFILES, seed=11)
    done_key = "scholarindex:job:lookups:done"
    try:
        with IndexedArxivStandIn(load_entries(site.root), hang_seconds=120) as arxiv:
            arxiv.fail_next("hang", times=100_000)  # the first worker's lookups never end
            for name in ("a", "b"):
                (tmp_path / name).mkdir()
            first = start_worker(tmp_path / "a", redis_server.url, "lookups", site.url_file,
                                 {**worker_settings(opensearch_config, arxiv.api_url,
                                                    tmp_path / "a-cache"),
                                  "ARXIV_TIMEOUT_SECONDS": "300"})

            def acked() -> int:
                return sum(int(n) for n in redis_server.client().hgetall(done_key).values())
            wait_until(lambda: acked() >= acked_before_kill, 90, "pages acknowledged")
            first.process.send_signal(signal.SIGKILL)
            assert first.finish().returncode == -signal.SIGKILL
            arxiv.reset()  # answers again

            second = start_worker(tmp_path / "b", redis_server.url, "lookups", site.url_file,
                                  worker_settings(opensearch_config, arxiv.api_url,
                                                  tmp_path / "b-cache"))
            result = second.finish(timeout=120)
        assert result.returncode == 0, result.log[-3000:]
        works = snapshot(build_client_for(opensearch_config), f"{opensearch_config.prefix}works")
        assert works
        statuses = {doc["enrichment"]["status"] for doc in works.values()}
        assert "pending" not in statuses, sorted(
            w for w, doc in works.items() if doc["enrichment"]["status"] == "pending")
        assert "done" in statuses
        assert "a dead worker of the job left unanswered" in result.log
        # Nothing left behind in Redis.
        assert not redis_server.client().keys("scholarindex:job:lookups:lookups:*")
    finally:
        site.server.__exit__(None, None, None)


def build_client_for(config: OpenSearchConfig) -> OpenSearch:
    from scholarindex.indexing.client import build_client
    return build_client(config)


def _work(work_id: str, status: str, reason: str) -> dict[str, object]:
    return {"work_id": work_id, "title": "A Title Of Words", "year": 2020,
            "researcher_name": "Ada Lovelace", "authors": ["A. Turing"],
            "enrichment": {"status": status, "reason": reason}}


def test_only_works_queued_for_arxiv_are_held_and_an_early_answer_is_not_held() -> None:
    page = SimpleNamespace(works=[_work("w1", "pending", "queued"), _work("w2", "done", "x"),
                                  _work("w3", "pending", "arXiv unavailable: down"),
                                  _work("w4", "pending", "queued")])
    assert [e["work_id"] for e in queued_works(page)] == ["w1", "w4"]
    book = LookupBook()
    book.answered("w4")  # its answer came before the page's item left the pipelines
    book.page_item("p1", page)
    held = book.page_done("p1")
    assert list(held) == ["w1"]
    assert held["w1"]["listings"] == [{"work_id": "w1", "title": "A Title Of Words",
                                       "year": 2020, "researcher_name": "Ada Lovelace",
                                       "authors": ["A. Turing"]}]
    assert book.answered("w1")
    book.wait("w1", 3)
    assert book.delivered(2) == []
    assert book.delivered(3) == ["w1"]
    assert book.held == {}


def test_a_work_answered_again_for_an_adopted_page_is_let_go_only_after_its_last_answer(
        ) -> None:
    # The soak (4 x 2,000) hung: every worker kept a few lookups in Redis whose answers
    # were in the index, and waited for the others'. A work held for its own page and
    # answered (flush 1) came again in a dead worker's outbox entry adopted meanwhile,
    # and was answered again (flush 3): flush 1 let it go, then the adopted page's hold
    # (delivered with flush 2) wrote it to Redis again, and nothing ever took it out.
    book = LookupBook()
    book.page_item("own", SimpleNamespace(works=[_work("w1", "pending", "queued")]))
    assert list(book.page_done("own")) == ["w1"]
    assert book.answered("w1")
    book.wait("w1", 1)
    adopted = {"work_id": "w1", "listings": [{"work_id": "w1", "title": "A Title Of Words",
                                              "year": 2020, "researcher_name": "Bo",
                                              "authors": None}]}
    book.adopted([adopted])  # an outbox entry's work, its page waiting for flush 2
    assert book.answered("w1")
    book.wait("w1", 3)
    assert book.delivered(1) == []  # a later answer still waits
    assert list(book.still_held({"w1": adopted})) == ["w1"]  # the page's hold, flush 2
    assert book.drop(["w1"]) == []  # nor let go by an answer found delivered already
    assert book.delivered(3) == ["w1"]
    assert book.still_held({"w1": adopted}) == {}  # a hold coming after is not written
    assert book.held == {}


def test_a_dead_workers_lookups_are_adopted_and_a_live_ones_only_counted(
        redis_server: RedisServer) -> None:
    from scholarindex.distributed.connection import RedisLink
    from scholarindex.distributed.jobs import heartbeat
    from scholarindex.distributed.keys import JobKeys
    from scholarindex.distributed.lookups import Lookups

    keys = JobKeys("t:", "job")
    link = RedisLink(redis_server.url, 5)
    alive, dead, me = (Lookups(link, keys, w, grace_seconds=0) for w in ("alive", "dead", "me"))
    heartbeat(link, keys, "alive", 60, {})
    heartbeat(link, keys, "dead", 0.05, {})
    heartbeat(link, keys, "me", 60, {})
    alive.hold({"w1": {"work_id": "w1", "titles": ["A"], "years": [], "people": []}})
    dead.hold({"w2": {"work_id": "w2", "titles": ["B"], "years": [2020], "people": ["X"]}})
    time.sleep(0.1)  # the dead one's heartbeat lapses
    others, adopted = me.adopt()
    assert others == 1
    assert adopted == [{"work_id": "w2", "titles": ["B"], "years": [2020], "people": ["X"]}]
    assert me.held() == {"w2"} and dead.held() == set() and alive.held() == {"w1"}
    assert me.adopt() == (1, [])  # adopted once
    alive.drop(["w1"])
    me.clear()
    assert me.adopt() == (0, [])


def test_lookups_are_adopted_only_past_the_grace(redis_server: RedisServer) -> None:
    # A live worker starved of CPU misses its 3-s heartbeat: its lookups adopted at once
    # went round the live workers of the soak, looked up and written again each time.
    from scholarindex.distributed.connection import RedisLink
    from scholarindex.distributed.jobs import heartbeat
    from scholarindex.distributed.keys import JobKeys
    from scholarindex.distributed.lookups import Lookups

    keys = JobKeys("t:", "job")
    link = RedisLink(redis_server.url, 5)
    starved = Lookups(link, keys, "starved")
    heartbeat(link, keys, "starved", 0.05, {})
    heartbeat(link, keys, "me", 60, {})
    starved.hold({"w1": {"work_id": "w1", "listings": []}})
    time.sleep(0.1)  # the heartbeat lapsed, but the worker may yet renew it
    assert Lookups(link, keys, "me").adopt() == (1, [])  # counted: the job is not done
    assert starved.held() == {"w1"}
    assert Lookups(link, keys, "me", grace_seconds=0).adopt() == (
        0, [{"work_id": "w1", "listings": []}])
