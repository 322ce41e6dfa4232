"""Helpers shared by the tests: servers, crawls, sample data. No tests here."""
