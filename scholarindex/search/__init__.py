"""The search language: a search request, its facets, match levels and the OpenSearch
bodies that answer it. Pure functions, shared by the search UI and `scholarindex`'s index
checks, so "the same search" means the same thing to both."""
