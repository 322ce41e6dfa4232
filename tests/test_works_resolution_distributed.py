"""Two workers of one distributed job resolve works as one crawl would.

Five profiles list the same five papers; four of them misprint one title each (a
letter dropped or doubled). Two workers crawl them on one Redis, each runs the
resolution pass when the job ends; the index must hold five works and equal what a
single-process crawl of the same pages leaves.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scholarindex.indexing.client import build_client
from scholarindex.indexing.connection import OpenSearchConfig
from standins.site import SiteServer
from tests.support.crawl import crawl_profiles
from tests.support.distributed import start_worker
from tests.support.index_contents import snapshot, untimed
from tests.support.redis import RedisServer
from tests.support.works import RELIBRA, profile_page

pytestmark = [pytest.mark.process, pytest.mark.slow]

PROFILES = 5

TITLES = [RELIBRA,
          "Cross-Modal ASR Post-Processing System for Error Correction and Utterance Rejection",
          "FFConv: Fast Factorized Convolutional Neural Network Inference on Encrypted Data",
          "LSTMSPLIT: Effective SPLIT Learning based LSTM on Sequential Time-Series Data"]


def misprint(title: str, n: int) -> str:
    """The title with one letter of its n-th long word dropped or doubled."""
    words = title.split()
    longs = [i for i, w in enumerate(words) if len(w) > 7 and w.isalpha()]
    i = longs[n % len(longs)]
    word = words[i]
    words[i] = word[:4] + word[5:] if n % 2 else word[:4] + word[4] + word[4:]
    return " ".join(words)


def write_site(root: Path) -> list[str]:
    root.mkdir(parents=True)
    names = []
    for n in range(PROFILES):  # profile n misprints the n-th title (the first none)
        retitle = {TITLES[n - 1]: misprint(TITLES[n - 1], n)} if n else {}
        profile_page(root / f"p{n}.txt", f"Person Number{n}", retitle)
        names.append(f"p{n}.txt")
    return names


def works(config: OpenSearchConfig, prefix: str) -> dict[str, dict]:
    docs = untimed(snapshot(build_client(config), f"{prefix}works"))
    for doc in docs.values():
        for entry in [doc, *doc.get("listings", [])]:
            entry.pop("first_seen", None)
    return docs


def test_two_workers_resolve_as_one_crawl(tmp_path: Path, redis_server: RedisServer,
                                          opensearch_config: OpenSearchConfig) -> None:
    pages = write_site(tmp_path / "site")
    with SiteServer(tmp_path / "site") as site:
        url_file = tmp_path / "urls.txt"
        url_file.write_text("\n".join(site.url(p) for p in pages) + "\n", encoding="utf-8")
        prefix = opensearch_config.prefix
        settings = {"INDEX_ENABLED": "true", "OPENSEARCH_URL": opensearch_config.url,
                    "INDEX_PREFIX": prefix, "ROBOTSTXT_OBEY": "false"}
        workers = [start_worker(tmp_path, redis_server.url, "resolve", url_file,
                                settings) for i in range(2)]
        results = [w.finish() for w in workers]
        for result in results:
            assert result.returncode == 0, result.log[-3000:]
        assert any("works resolved" in r.log for r in results)

        reference = f"{prefix}ref_"
        single = crawl_profiles(tmp_path / "single", {**settings, "INDEX_PREFIX": reference},
                                url_file=str(url_file))
        assert single.returncode == 0

    together, alone = works(opensearch_config, prefix), works(opensearch_config, reference)
    assert len(alone) == 5  # four papers misprinted once, and one printed alike everywhere
    assert all(len(doc["listings"]) == PROFILES for doc in alone.values())
    assert together == alone
