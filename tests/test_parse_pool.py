"""Pages parsed in worker processes read exactly as parsed in the crawl's own process."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import pytest

from crawler.extract import parse_profile
from crawler.parse_pool import ParsePool
from standins.site import SiteServer
from tests.support.crawl import crawl_profiles

FIXTURES = Path(__file__).parent.parent / "fixtures"
PAGES = sorted(p for p in (FIXTURES / "site").rglob("*.html") if "private" not in p.parts)
TODAY = date(2026, 11, 22)


def parse_all(pool: ParsePool, paths: list[Path]) -> list:
    async def run() -> list:
        return await asyncio.gather(*(pool.parse(f"http://site.test/{p.name}", p.read_bytes(),
                                                 "text/html", TODAY) for p in paths))
    return asyncio.run(run())


@pytest.mark.parametrize("processes", [0, 1, 2])
def test_pool_gives_what_parse_profile_gives(processes: int) -> None:
    pool = ParsePool(processes)
    try:
        assert pool.wait_started(30) == (processes > 0)
        pages = parse_all(pool, PAGES)
    finally:
        pool.close()
    want = [parse_profile(f"http://site.test/{p.name}", p.read_bytes(), "text/html", TODAY)
            for p in PAGES]
    assert pages == want
    assert sum(page.researcher is not None for page in pages) >= 5
    assert pool.cpu_seconds > 0
    assert pool.parsed_here == (0 if processes else len(PAGES))


def test_a_dead_worker_falls_back_to_parsing_here(caplog) -> None:
    pool = ParsePool(1)
    try:
        assert pool.wait_started(30)
        first = parse_all(pool, PAGES[:1])
        for pid in pool.worker_pids:
            os.kill(pid, signal.SIGKILL)  # a parser library crashing the worker
        with caplog.at_level(logging.ERROR, logger="crawler.parse_pool"):
            again = parse_all(pool, PAGES[:1] * 3)
    finally:
        pool.close()
    assert again == first * 3
    assert pool.in_process
    assert "parsing in the crawl's process" in caplog.text


def test_pages_are_parsed_here_until_a_worker_has_started() -> None:
    pool = ParsePool(1)
    try:
        page = parse_all(pool, PAGES[:1])[0]  # at once: the worker is still importing
        assert pool.parsed_here == 1 and not pool.in_process
        assert pool.wait_started(30)
        assert parse_all(pool, PAGES[:1])[0] == page
        assert pool.parsed_here == 1
    finally:
        pool.close()


def test_pages_in_hand_when_the_pool_stops_are_parsed_here() -> None:
    pool = ParsePool(1)
    assert pool.wait_started(30)

    async def run() -> list:
        pages = [asyncio.ensure_future(pool.parse(f"http://site.test/{p.name}", p.read_bytes(),
                                                  "text/html", TODAY)) for p in PAGES[:3]]
        await asyncio.sleep(0)  # one page sent to the worker, two waiting for it
        pool.close(kill=True)
        return await asyncio.gather(*pages)

    pages = asyncio.run(run())
    assert pages == [parse_profile(f"http://site.test/{p.name}", p.read_bytes(), "text/html",
                                   TODAY) for p in PAGES[:3]]
    assert pool.parsed_here >= 2 and pool.in_process


def test_a_parser_error_in_a_worker_is_raised_in_the_crawl() -> None:
    pool = ParsePool(1)
    try:
        assert pool.wait_started(30)
        with pytest.raises(AttributeError):  # as parse_profile raises it here
            asyncio.run(pool.parse("http://site.test/a.html", 123, "text/html",  # type: ignore[arg-type]
                                   TODAY))
        assert not pool.in_process  # the worker lives on
        assert parse_all(pool, PAGES[:1]) and pool.parsed_here == 0
    finally:
        pool.close()


def test_crawl_items_are_the_same_with_and_without_parser_processes(tmp_path: Path) -> None:
    # (processes, pages parsed here before they start): none; from the first page; after 3.
    setups = {"none": (0, 0), "at once": (1, 0), "after 3": (1, 3), "never": (1, 1000)}
    with SiteServer(FIXTURES / "site") as site:
        urls = ",".join(site.url(line) for line in (FIXTURES / "site" / "urls.txt")
                        .read_text().split() if line.startswith("/"))
        runs = {name: crawl_profiles(tmp_path / name.replace(" ", "-"),
                                     {"PARSE_PROCESSES": str(n), "PARSE_PROCESSES_AFTER": str(k)},
                                     urls=urls)
                for name, (n, k) in setups.items()}
    def key(item: dict) -> tuple:
        return item["kind"], item.get("work_id") or item["id"], item.get("researcher_id") or ""

    expected = sorted(runs["none"].items, key=key)
    assert len(expected) > 20
    assert all(sorted(run.items, key=key) == expected for run in runs.values())
    processes = {name: run.stats["cpu/parse_processes"] for name, run in runs.items()}
    assert processes == {"none": 0, "at once": 1, "after 3": 1, "never": 0}
    here = {name: run.stats["cpu/pages_parsed_in_crawl_process"] for name, run in runs.items()}
    assert here["never"] == here["none"] > 3
    assert here["after 3"] >= 3  # the first three always, then more until a worker is up


def test_workers_exit_when_the_crawl_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "crawl.py"
    script.write_text(
        "import time\n"
        "from crawler.parse_pool import ParsePool\n"
        "if __name__ == '__main__':\n"
        "    pool = ParsePool(2)\n"
        "    assert pool.wait_started(30)\n"
        "    print(*pool.worker_pids, flush=True)\n"
        "    time.sleep(60)\n")
    crawl = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).parent.parent)
    try:
        workers = [int(pid) for pid in crawl.stdout.readline().split()]  # type: ignore[union-attr]
        assert workers and all(_alive(pid) for pid in workers)
        crawl.kill()  # SIGKILL: the crawl cannot tell its workers anything
        crawl.wait(10)
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(_alive(pid) for pid in workers)
    finally:
        crawl.kill()
        crawl.wait(10)


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return status != "Z"
