"""Who a run is: its job name (shared by runs of one schedule) and its run id.

The job name keys the lock file, the page state store and the run report, so
two runs of one schedule must agree on it. Set it with ``-s RUN_JOB=name`` (or
``-a job=name``);
otherwise it is derived from the URL list: the url_file's absolute path (so a
list that grows keeps its job) or the sorted ``urls`` argument.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from pathlib import Path

from scrapy.crawler import Crawler
from scrapy.settings import BaseSettings

from scholarindex.core import stat_keys
from scholarindex.core.urls import read_url_list

# The file in a JOBDIR that remembers the run id across a pause and resume.
RUN_FILE = "scholarindex-run.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(name: str) -> str:
    """A job name usable as a file name."""
    return _UNSAFE.sub("-", name).strip("-.") or "job"


def comma_urls(urls: str | None) -> list[str]:
    """The URLs of ``-a urls=URL[,URL...]``."""
    return [u.strip() for u in (urls or "").split(",") if u.strip()]


def given_urls(urls: str | None, url_file: str | None) -> list[str]:
    """The URLs a crawl is given: ``-a urls=...``, then ``-a url_file=PATH``'s lines."""
    given = comma_urls(urls)
    if url_file:
        given += read_url_list(Path(url_file).read_text(encoding="utf-8"))
    return given


def derive_job_name(urls: str | None = None, url_file: str | None = None) -> str:
    if url_file:
        path = Path(url_file).resolve()
        digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
        return safe_name(f"{path.stem}-{digest}")
    given = sorted(comma_urls(urls))
    digest = hashlib.sha1("\n".join(given).encode()).hexdigest()[:8]
    return f"urls-{digest}"


def job_name(settings: BaseSettings, spider_args: dict[str, str] | None = None) -> str:
    """RUN_JOB if set, else a name derived from the spider's URL arguments."""
    configured = settings.get("RUN_JOB")
    if configured:
        return safe_name(str(configured))
    args = spider_args or {}
    if args.get("job"):  # -a job=NAME (the distributed crawl's workers name their job)
        return safe_name(str(args["job"]))
    return derive_job_name(args.get("urls"), args.get("url_file"))


def state_dir(settings: BaseSettings) -> Path:
    return Path(settings["STATE_DIR"])


def run_id(jobdir: str | None) -> tuple[str, bool]:
    """(run id, resumed): under JOBDIR the same id again when the job resumes."""
    if not jobdir:
        return uuid.uuid4().hex, False
    path = Path(jobdir) / RUN_FILE
    try:
        return str(json.loads(path.read_text(encoding="utf-8"))["run_id"]), True
    except (OSError, ValueError, KeyError):
        pass
    new = uuid.uuid4().hex
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"run_id": new}), encoding="utf-8")
    return new, False


def run_identity(crawler: Crawler) -> tuple[str, str]:
    """(job, run id) of this crawl, fixed by whichever component asks first.

    Kept in the stats (``run/job``, ``run/id``) so every component sees the same
    pair and the stats dump shows it.
    """
    stats = crawler.stats
    job = stats.get_value(stat_keys.RUN_JOB)
    if job is None:
        # The crawl command puts the name in RUN_JOB; elsewhere derive it from the URLs.
        spider = crawler.spider
        urls = ",".join(getattr(spider, "start_urls", None) or [])
        job = job_name(crawler.settings, {"urls": urls})
        stats.set_value(stat_keys.RUN_JOB, job)
    rid = stats.get_value(stat_keys.RUN_ID)
    if rid is None:
        rid, resumed = run_id(crawler.settings.get("JOBDIR"))
        stats.set_value(stat_keys.RUN_ID, rid)
        stats.set_value(stat_keys.RUN_RESUMED, resumed)
    return str(job), str(rid)
