"""Run reports of a distributed crawl's workers add up into one exact job report."""

from __future__ import annotations

from scholarindex.ops.runs import merge_parts, run_summary


def report(worker: str | None, started: str, finished: str, parsed: int,
           duration: float) -> dict:
    return {"run_id": "r1", "job": "nightly", "ok": True, "exit_code": 0,
            "started_at": f"2026-11-22T01:{started}+00:00",
            "finished_at": f"2026-11-22T01:{finished}+00:00", "duration_seconds": duration,
            "listings": parsed * 20, "pages": {"listed": 240, "parsed": parsed,
                                               "fetched": parsed},
            **({"worker": worker} if worker else {})}


def test_workers_count_the_url_list_once_and_the_job_lasts_from_first_start_to_last_end(
        ) -> None:
    parts = [report("a", "00:10", "02:00", 130, 110.0), report("b", "00:12", "01:40", 110, 88.0)]
    (run,) = merge_parts(parts)
    assert run["pages"]["listed"] == 240  # not 480
    assert run["pages"]["parsed"] == 240
    assert run["duration_seconds"] == 110.0  # 01:00:10 to 01:02:00, not 198
    assert run["started_at"].endswith("00:10+00:00")
    assert run["finished_at"].endswith("02:00+00:00")
    assert [(w["worker"], w["pages_parsed"], w["duration_seconds"]) for w in run["workers"]] \
        == [("a", 130, 110.0), ("b", 110, 88.0)]
    assert "2 workers, parsed 130/110" in run_summary(run)


def test_unnamed_parts_that_overlap_are_workers_and_parts_one_after_another_a_resumed_run(
        ) -> None:
    # The crawl-runs index stores no worker name: overlapping times tell workers apart.
    (workers,) = merge_parts([report(None, "00:10", "02:00", 130, 110.0),
                              report(None, "00:12", "01:40", 110, 88.0)])
    assert workers["pages"]["listed"] == 240 and len(workers["workers"]) == 2
    (resumed,) = merge_parts([report(None, "00:00", "01:00", 100, 60.0),
                              report(None, "05:00", "06:00", 140, 60.0)])
    assert resumed["duration_seconds"] == 120.0 and "workers" not in resumed


def test_the_listings_left_unread_add_up_over_the_parts() -> None:
    parts = [report(None, "00:00", "01:00", 100, 60.0) | {"listings_unread": 3},
             report(None, "05:00", "06:00", 140, 60.0) | {"listings_unread": 2}]
    (resumed,) = merge_parts(parts)
    assert resumed["listings_unread"] == 5
