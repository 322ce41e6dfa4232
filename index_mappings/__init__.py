"""OpenSearch settings and mappings, one JSON file per index.

A package only so that the JSON files ship in wheels and Scrapyd eggs.
"""
