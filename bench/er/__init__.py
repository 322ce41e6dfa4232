"""Work resolution measured on labelled data (DBLP-ACM, DBLP-Scholar, Cora, bib-dedupe's
respiratory and cytology screening sets); not shipped.

- ``data``: the readers (``ER_DATA_DIR``, default ``../shared/data/er``): records and gold pairs;
- ``site``: each data set as the profile sites a crawl meets (bench.generate's renderer),
  with the listing map from each page back to its records;
- ``listings``: parsed listings matched to their records; ``atoms``: work items to the
  index's documents (its own merge) and documents to resolution atoms;
- ``score``: pairwise precision / recall / F1, blocking's pair completeness and reduction;
- ``evaluate``: the offline evaluator (``python -m bench.er.evaluate``); the crawl end to
  end is ``bench.dedupe`` (``make bench-dedupe``).
"""
