"""Extraction: page text to items, kept apart from crawling so it is tested alone."""

from crawler.extract.page import ProfilePage, parse_profile
from crawler.extract.problems import PageProblem, ProblemKind

__all__ = ["PageProblem", "ProblemKind", "ProfilePage", "parse_profile"]
