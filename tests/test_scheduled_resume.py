"""Pause (SIGINT) and resume (the same command again) with JOBDIR: nothing lost, nothing twice."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from crawler.extensions.verdict import EXIT_ALREADY_RUNNING, EXIT_FAILED, EXIT_OK
from standins.site import SiteServer
from tests.support.scheduled import (
    EXPECTED,
    HELDOUT,
    SEEDS,
    crawl_args,
    crawl_env,
    page_state,
    read_items,
    wait_for,
)

PROFILES = [*SEEDS, *(p for p in HELDOUT if not p.name.startswith("junk_"))]


def page_requests(site: SiteServer) -> list[str]:
    return [path for path in site.requests if path != "/robots.txt"]


@pytest.mark.process
def test_interrupted_run_resumes_without_loss_or_repeats(tmp_path: Path) -> None:
    root = tmp_path / "site"
    root.mkdir()
    for page in PROFILES:
        shutil.copy(page, root / page.name)
    workdir = tmp_path / "run"
    workdir.mkdir()
    items = workdir / "items.jsonl"
    expected_works = sum(len(json.loads((EXPECTED / f"{p.stem}.json").read_text())["works"])
                         for p in PROFILES)

    with SiteServer(root) as site:
        # One page at a time, two seconds apart: slow enough to interrupt mid-crawl even
        # when the overlap check below takes a loaded machine several seconds to start.
        settings = {"RUN_JOB": "resume", "STATE_DIR": str(workdir / "state"),
                    "JOBDIR": str(workdir / "jobdir"), "DOWNLOAD_DELAY": "2",
                    "DOWNLOAD_DELAY_JITTER": "0", "CONCURRENT_REQUESTS": "1"}
        args = crawl_args(",".join(site.url(p.name) for p in PROFILES), settings,
                          "-o", f"{items}:jsonl")  # -o appends: both parts land in one file

        def run(*more: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([*args, *more], cwd=workdir, env=crawl_env(workdir),
                                  capture_output=True, text=True, timeout=60)

        first = subprocess.Popen(args, cwd=workdir, env=crawl_env(workdir),
                                 stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: len(page_requests(site)) >= 2, what="the first pages")
            # The same job again while the first run goes on: refused at once.
            overlap = run()
            assert overlap.returncode == EXIT_ALREADY_RUNNING, overlap.stderr[-2000:]
            assert "job resume is already running" in overlap.stderr
            first.send_signal(signal.SIGINT)
            _, stderr = first.communicate(timeout=30)
        finally:
            if first.poll() is None:
                first.kill()
        assert first.returncode == EXIT_FAILED, stderr[-3000:]
        assert "interrupted (shutdown); run the same command again to resume" in \
            stderr.strip().splitlines()[-1]
        fetched_before = len(page_requests(site))
        before = read_items(items)
        researchers_before = sum(1 for item in before if item["kind"] == "researcher")
        assert 0 < researchers_before < len(PROFILES), "the pause did not land mid-crawl"

        # The same command again resumes; it need not keep the delay that made the first
        # part slow enough to interrupt.
        second = run("-s", "DOWNLOAD_DELAY=0", "-s", f"RUN_REPORT={workdir / 'second.json'}")
        assert second.returncode == EXIT_OK, second.stderr[-3000:]
        report = json.loads((workdir / "second.json").read_text(encoding="utf-8"))
        assert report["resumed"] is True and report["ok"] is True
        # The page state from before the pause is committed too.
        state = page_state(workdir / "state", "resume")
        assert set(state) == {site.url(p.name) for p in PROFILES}
        assert all(page["committed"] and not page["pending"] for page in state.values())
        # Pages fetched before the pause are not fetched again.
        assert len(page_requests(site)) - fetched_before == len(PROFILES) - researchers_before

        all_items = read_items(items)
        researchers = Counter(item["url"] for item in all_items if item["kind"] == "researcher")
        assert researchers == Counter({site.url(p.name): 1 for p in PROFILES})
        listings = Counter((item["researcher_id"], item["position"])
                           for item in all_items if item["kind"] == "work")
        assert sum(listings.values()) == len(listings) == expected_works

        # The JOBDIR was reset when the crawl got to its end: the next scheduled run with
        # the same command (only faster here) starts afresh, and finds every page unchanged.
        third = run("-s", "DOWNLOAD_DELAY=0", "-s", f"RUN_REPORT={workdir / 'third.json'}")
        assert third.returncode == EXIT_OK, third.stderr[-3000:]
        report = json.loads((workdir / "third.json").read_text(encoding="utf-8"))
        assert report["resumed"] is False
        assert report["pages"]["not_modified"] == len(PROFILES)
        assert len(read_items(items)) == len(all_items)
