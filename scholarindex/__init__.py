"""Scholar Index: the libraries behind the crawl (core, indexing, enrichment, the
distributed frontier), the operators' CLI (ops) and the search UI (webui)."""
