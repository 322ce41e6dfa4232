"""The raw-fetch spider: the same requests as ``profiles``, and nothing done with the pages.

    scrapy crawl raw -a url_file=urls.txt -s SPIDER_MODULES=crawler.spiders,bench.spiders

Its rate is the limit the pipeline is measured against: Scrapy with the project's
settings, middlewares and extensions, fetching every page, with no parsing,
items or pipelines. The run verdict (exit status) judges profile crawls, so a raw
crawl exits non-zero ("no profile found"); the runner checks ``raw/pages`` instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import scrapy
from scrapy.http import Response
from twisted.python.failure import Failure

from scholarindex.core.urls import read_url_list


class RawSpider(scrapy.Spider):
    name = "raw"

    def __init__(self, url_file: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = read_url_list(Path(url_file).read_text("utf-8")) if url_file else []

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse, errback=self.failed)

    def parse(self, response: Response, **kwargs: Any) -> None:
        self.crawler.stats.inc_value("raw/pages")  # count it; touch nothing else

    def failed(self, failure: Failure) -> None:
        self.crawler.stats.inc_value("raw/failed")
