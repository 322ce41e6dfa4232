"""Data to search: the fixture pages through the real parser and writer, or synthetic works.

Used by the tests (fixture index) and by ``bench.search`` (both). The
fixture route is the honest one: pages parsed with ``crawler.extract`` and
merged into documents by ``scholarindex.indexing.bulk.BulkWriter``, as a crawl would.
Synthetic works go through ``scholarindex.indexing.documents`` too, so they have exactly the
index's document shape, and are bulk-loaded directly (a benchmark needs 100k).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping
from datetime import date
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch, helpers

from bench.cluster import writer_retry
from crawler.extract import parse_profile
from scholarindex.indexing.bulk import BulkWriter
from scholarindex.indexing.changes import Change, change_from_item
from scholarindex.indexing.connection import DEFAULT_LAYOUT, IndexLayout
from scholarindex.indexing.deadletter import DeadLetterFile
from scholarindex.indexing.documents import merge_listing, work_doc_from_listing
from scholarindex.indexing.indices import alias_name, ensure_aliases
from scholarindex.indexing.shapes import WorkDoc

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_PAGES = (ROOT / "fixtures" / "seeds", ROOT / "fixtures" / "heldout")
CRAWL_DATE = date(2026, 11, 22)  # every fixture's expected values assume this day
SEEN_AT = "2026-11-22T00:00:00Z"


def fixture_changes(dirs: Iterable[Path] = FIXTURE_PAGES) -> list[Change]:
    """One change per researcher and listing of every fixture page (junk pages give none)."""
    changes: list[Change] = []
    for folder in dirs:
        for path in sorted(folder.glob("*.txt")):
            page = parse_profile(path.as_uri(), path.read_bytes(), "text/plain", today=CRAWL_DATE)
            if page.researcher is not None:
                changes.append(change_from_item(page.researcher, SEEN_AT))
            changes.extend(change_from_item(work, SEEN_AT) for work in page.works)
    return changes


def index_fixtures(client: OpenSearch, prefix: str, dead_letters: Path,
                   layout: IndexLayout = DEFAULT_LAYOUT) -> int:
    """Parse and index every fixture page under ``prefix``; returns the works indexed.

    Raises if anything was dead-lettered: test data that silently lost a page
    would make every count in the tests meaningless.
    """
    ensure_aliases(client, prefix, layout=layout)
    writer = BulkWriter(client, prefix, DeadLetterFile(dead_letters), writer_retry(),
                        layout=layout)
    report = writer.write(fixture_changes())
    if report.dead_lettered or report.fatal:
        raise RuntimeError(f"fixture indexing lost documents: {report}")
    refresh(client, prefix)
    return int(client.count(index=alias_name(prefix, "works"))["count"])


def refresh(client: OpenSearch, prefix: str) -> None:
    """Make everything written so far searchable."""
    names = [alias_name(prefix, "works"), alias_name(prefix, "researchers")]
    client.indices.refresh(index=",".join(names))


# --- synthetic works ---------------------------------------------------------------------

WORDS = (
    "adaptive attention bayesian benchmark caching calibration causal clustering compiler "
    "compression consensus contrastive convolutional curriculum data dataset decoding "
    "diffusion distillation distributed dynamic efficient embedding encoder energy ensemble "
    "estimation evaluation experts federated fine-tuning gaussian generative gradient graph "
    "hardware hierarchical inference kernel knowledge language latency learning linear "
    "load-balancing low-rank memory meta mixture model multimodal network neural noise "
    "optimization parallel planning pretraining privacy probabilistic pruning quantization "
    "query reasoning recurrent reinforcement replay representation retrieval robust routing "
    "sampling scalable scheduling search segmentation self-supervised semantic sequence "
    "sparse speech stochastic storage streaming structured synthesis systems temporal "
    "tensor tokenizer training transformer uncertainty variational vision workload"
).split()
_FIRST = ("Ana Bo Chen Dmitri Elena Fatima Goran Hana Ivan Jun Kofi Lena Mei Nikhil Olga "
          "Pedro Qiu Rosa Sven Tariq Uma Viktor Wen Xin Yara Zoltan").split()
_LAST = ("Almeida Brandt Cheng Dubois Eriksen Fischer Garcia Hoang Ito Jensen Kowalski Li "
         "Moreau Novak Okafor Petrov Quinn Rossi Sato Tanaka Ueda Varga Wang Xu Yilmaz "
         "Zhou").split()
_CATEGORIES = ("LG", "CL", "CV", "DC", "AI", "IR", "CR", "RO", "NE", "PL", "DB", "OS")
_VENUES = ("arXiv", "NeurIPS", "ICML", "ICLR", "ACL", "CVPR", "OSDI", "SOSP", "VLDB", "KDD")
_TYPES = ("preprint", "article", "conference", "thesis")


def synthetic_works(count: int, *, researchers: int = 2000, seed: int = 0
                    ) -> Iterator[WorkDoc]:
    """``count`` work documents in the index's shape, reproducible for a ``seed``.

    Built with ``scholarindex.indexing.documents`` from made-up listings, one in five listed on
    two profiles (so co-authors and merged profiles exist at scale).
    """
    rng = random.Random(seed)
    names = [f"{rng.choice(_FIRST)} {rng.choice(_LAST)}" for _ in range(researchers)]
    for n in range(count):
        work_id = f"syn{n:07d}"
        title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 11))).capitalize()
        abstract = ". ".join(
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 18))).capitalize()
            for _ in range(rng.randint(3, 7))) + "."
        owners = rng.sample(range(researchers), 2 if rng.random() < 0.2 else 1)
        authors = [names[i] for i in owners] + [
            f"{rng.choice(_FIRST)} {rng.choice(_LAST)}" for _ in range(rng.randint(0, 4))]
        year = rng.randint(2000, 2026)
        papercards = rng.random() < 0.4
        doc: WorkDoc | None = None
        for position, owner in enumerate(owners, start=1):
            listing = {
                "work_id": work_id, "title": title, "abstract": abstract,
                "researcher_id": f"r{owner:05d}", "researcher_name": names[owner],
                "researcher_url": f"https://profiles.example/r{owner:05d}",
                "source": "papercards" if papercards else "bzpeer", "position": position,
                "year": year,
                "date": f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
                if papercards else None,
                "type": None if papercards else rng.choice(_TYPES),
                "venue": None if papercards else rng.choice(_VENUES),
                "category": rng.choice(_CATEGORIES) if papercards else None,
                "score": round(rng.uniform(30, 95), 1) if papercards else None,
                "code": rng.random() < 0.2 if papercards else None,
                "authors": authors if papercards else None,
                "authors_truncated": False if papercards else None,
            }
            doc = (work_doc_from_listing(listing, SEEN_AT) if doc is None
                   else merge_listing(doc, listing, SEEN_AT))
        assert doc is not None
        yield doc


def bulk_load(client: OpenSearch, prefix: str, docs: Iterable[Mapping[str, Any]],
              chunk_size: int = 2000) -> int:
    """Index ready-made work documents (``_id`` = ``work_id``); returns how many."""
    ensure_aliases(client, prefix)
    alias = alias_name(prefix, "works")
    actions = ({"_index": alias, "_id": doc["work_id"], "_source": doc} for doc in docs)
    written, _ = helpers.bulk(client, actions, chunk_size=chunk_size,
                                   max_chunk_bytes=20 * 1024 * 1024, raise_on_error=True,
                                   request_timeout=120)
    refresh(client, prefix)
    return int(written)
