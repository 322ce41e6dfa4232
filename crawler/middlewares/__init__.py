"""Downloader middlewares of the crawl."""
