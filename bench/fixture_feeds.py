"""Do two versions of the parser give the same feed for every fixture page?

    python -m bench.fixture_feeds [--ref main]

Parses every page under ``fixtures/`` (the plain-text seeds and held-out pages,
each HTML markup, the broken encodings, the static site) with ``parse_profile`` at
the fixtures' crawl date, and writes what a crawl's ``-o items.jsonl`` would hold
for it (``crawler.feeds.JsonLinesItemExporter``), after one line naming the page
with its layout and problems. It does so for this working tree and for ``ref``
(``git archive``d into a temporary directory, run by the same interpreter, on
this tree's fixture pages), then compares the two byte for byte and prints the
pages that differ. Exit status 0 when every page gives identical bytes, 1 if not.

``--dump PATH`` writes this tree's feed alone (what the comparison runs on each side).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRAWL_DATE = date(2026, 11, 22)  # every expected fixture value assumes it (fixtures/README.md)


def fixture_pages(fixtures: Path) -> Iterator[tuple[str, str]]:
    """(path under ``fixtures``, content type) of every page, in a fixed order."""
    for folder in ("seeds", "heldout"):
        for path in sorted((fixtures / folder).glob("*.txt")):
            yield path.relative_to(fixtures).as_posix(), "text/plain"
    for path in sorted((fixtures / "html").rglob("*.html")):
        yield path.relative_to(fixtures).as_posix(), "text/html"
    for path in sorted((fixtures / "site").rglob("*.html")):
        yield path.relative_to(fixtures).as_posix(), "text/html"


def dump(fixtures: Path, out: io.BufferedIOBase) -> int:
    """Write the feed of every fixture page to ``out``; returns the number of pages."""
    from crawler.extract import parse_profile
    from crawler.feeds import JsonLinesItemExporter
    from scholarindex.core.items import PageItem

    pages = 0
    for name, content_type in fixture_pages(fixtures):
        page = parse_profile(f"https://fixtures.example/{name}", (fixtures / name).read_bytes(),
                             content_type, CRAWL_DATE)
        # Problems as the text a log shows: what a revision before typed problems wrote.
        head = {"page": name, "layout": page.layout, "problems": [str(p) for p in page.problems],
                "links": page.links}
        out.write(json.dumps(head, ensure_ascii=False).encode() + b"\n")
        if page.researcher is not None:
            # Scrapy annotates the file as BytesIO; any binary file works.
            exporter = JsonLinesItemExporter(out)  # type: ignore[arg-type]
            exporter.start_exporting()
            exporter.export_item(PageItem(page.researcher, page.works))
            exporter.finish_exporting()
        pages += 1
    return pages


def _by_page(feed: bytes) -> dict[str, list[bytes]]:
    pages: dict[str, list[bytes]] = {}
    current: list[bytes] = []
    for line in feed.splitlines():
        record = json.loads(line)
        if "page" in record and "problems" in record:
            current = pages.setdefault(record["page"], [])
        current.append(line)
    return pages


def run_in(tree: Path, script: Path, args: list[str], timeout: float) -> str:
    """Run ``script`` with ``tree``'s packages, in a child process of this interpreter.

    Run as ``-c``, not as a file path: a file's folder goes first on ``sys.path``, and
    bench/indexing.py would hide the ``indexing`` package. Returns its standard output.
    """
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    run_file = ("import runpy, sys; sys.argv = sys.argv[1:]; "
                "runpy.run_path(sys.argv[0], run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", run_file, str(script), *args], cwd=tree,
                          env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode:
        raise RuntimeError(f"{script.name} {' '.join(args)} in {tree} failed "
                           f"(exit {done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def _feed_of(tree: Path, fixtures: Path) -> bytes:
    """The feed dumped by the parser in ``tree``."""
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as out:
        run_in(tree, Path(__file__).resolve(),
               ["--dump", out.name, "--fixtures", str(fixtures)], timeout=600)
        return Path(out.name).read_bytes()


def _archive(ref: str, into: Path) -> None:
    tar = subprocess.run(["git", "archive", "--format=tar", ref], cwd=ROOT, check=True,
                         capture_output=True, timeout=120).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(into, filter="data")


def compare(ref: str, fixtures: Path) -> int:
    with tempfile.TemporaryDirectory(prefix="fixture-feeds-") as tmp:
        _archive(ref, Path(tmp))
        theirs = _feed_of(Path(tmp), fixtures)
    ours = _feed_of(ROOT, fixtures)
    before, after = _by_page(theirs), _by_page(ours)
    differ = sorted(name for name in before.keys() | after.keys()
                    if before.get(name) != after.get(name))
    records = sum(len(lines) - 1 for lines in after.values())
    print(f"{len(after)} fixture pages, {records} feed records; {ref}: {len(theirs)} bytes, "
          f"this tree: {len(ours)} bytes; byte-identical: {theirs == ours}")
    for name in differ:
        print(f"DIFFERS {name}")
        for line in before.get(name, []):
            if line not in after.get(name, []):
                print(f"  - {line.decode()[:300]}")
        for line in after.get(name, []):
            if line not in before.get(name, []):
                print(f"  + {line.decode()[:300]}")
    return 0 if theirs == ours else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", default="main", help="git revision to compare with")
    parser.add_argument("--fixtures", type=Path, default=ROOT / "fixtures")
    parser.add_argument("--dump", type=Path, help="only write this tree's feed to DUMP")
    opts = parser.parse_args(argv)
    if opts.dump:
        with opts.dump.open("wb") as out:
            dump(opts.fixtures, out)
        return 0
    return compare(opts.ref, opts.fixtures)


if __name__ == "__main__":
    sys.exit(main())
