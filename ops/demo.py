"""``make demo``: the whole pipeline on the local fixture site, offline.

Serves ``fixtures/site`` on 127.0.0.1, crawls every profile it lists with the
real ``scrapy crawl profiles`` command, and prints what came out.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

from standins.site import SiteServer

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "fixtures" / "site"
OUT = ROOT / "demo-output"


def crawl(url_file: Path, items: Path, *settings: str) -> None:
    command = [str(Path(sys.executable).with_name("scrapy")), "crawl", "profiles",
               "-a", f"url_file={url_file}", "-O", str(items), "-s", "LOG_LEVEL=WARNING"]
    for setting in settings:
        command += ["-s", setting]
    subprocess.run(command, cwd=ROOT, check=True)


def summarise(items: Path) -> str:
    rows = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    researchers = {r["id"]: r for r in rows if r["kind"] == "researcher"}
    works = [r for r in rows if r["kind"] == "work"]
    profiles_by_work: dict[str, list[str]] = defaultdict(list)
    titles: dict[str, str] = {}
    for work in works:
        profiles_by_work[work["work_id"]].append(work["researcher_name"])
        titles.setdefault(work["work_id"], work["title"])
    layouts = Counter(r["source"] for r in researchers.values())
    lines = [
        f"researchers: {len(researchers)} ({', '.join(f'{n} {k}' for k, n in layouts.items())})",
        f"listings:    {len(works)}",
        f"works:       {len(profiles_by_work)} distinct",
        "shared works:",
    ]
    shared = {wid: names for wid, names in profiles_by_work.items() if len(names) > 1}
    for wid, names in sorted(shared.items(), key=lambda kv: titles[kv[0]]):
        lines.append(f"  {titles[wid][:70]}")
        lines.append(f"    on the profiles of {', '.join(sorted(names))}")
    if not shared:
        lines.append("  (none)")
    return "\n".join(lines)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    items = OUT / "items.jsonl"
    with SiteServer(SITE) as site:
        url_file = OUT / "urls.txt"
        paths = (SITE / "urls.txt").read_text(encoding="utf-8").splitlines()
        url_file.write_text(
            "\n".join(site.url(p) if p.strip() and not p.startswith("#") else p for p in paths),
            encoding="utf-8",
        )
        print(f"Serving the fixture profile site at {site.base}")
        crawl(url_file, items, "INDEX_ENABLED=false", "ARXIV_ENABLED=false")
    print(summarise(items))
    print(f"\nItems: {items}")


if __name__ == "__main__":
    main()
