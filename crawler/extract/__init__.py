"""Extraction: page text to items, kept apart from crawling so it is tested alone."""

from crawler.extract.page import ProfilePage, parse_profile

__all__ = ["ProfilePage", "parse_profile"]
