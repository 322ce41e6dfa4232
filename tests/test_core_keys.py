"""The names other programs read: stat keys and enrichment statuses, declared once in core."""

from typing import get_args

from scholarindex.core import enrichment_status, stat_keys

PUBLIC = {  # read by run reports, the verdict and outside checks: they never change
    "PROFILES_PARSED": "profiles/parsed",
    "PROFILES_FAILED_BY_REASON": "profiles/failed/",
    "INCREMENTAL_NOT_MODIFIED": "incremental/not_modified",
    "ARXIV_MATCHED": "arxiv/matched",
    "ARXIV_PENDING": "arxiv/pending",
    "INDEX_DOCS": "index/docs",
    "INDEX_DEAD_LETTERED": "index/dead_lettered",
    "INDEX_DEAD_LETTERED_BY_CODE": "index/dead_lettered/",
    "RUN_EXIT_CODE": "run/exit_code",
    "SCRAPY_ERRORS_LOGGED": "log_count/ERROR",
}


def _keys() -> dict[str, str]:
    return {name: value for name, value in vars(stat_keys).items()
            if name.isupper() and name.split("_")[0] in
            {"PROFILES", "INCREMENTAL", "ARXIV", "INDEX", "RUN", "SCRAPY"}
            and isinstance(value, str)}


def test_public_stat_keys_keep_their_names() -> None:
    keys = _keys()
    for name, value in PUBLIC.items():
        assert keys[name] == value


def test_each_stat_key_is_declared_once_in_its_namespace() -> None:
    keys = _keys()
    assert len(set(keys.values())) == len(keys)
    for name, value in keys.items():
        namespace = name.split("_")[0].lower()
        if namespace != "scrapy":
            assert value.startswith(f"{namespace}/"), name


def test_every_lookup_status_has_its_stat() -> None:
    assert set(stat_keys.ARXIV_BY_STATUS) == set(get_args(enrichment_status.Status))
    assert stat_keys.ARXIV_BY_STATUS[enrichment_status.DONE] == "arxiv/matched"
    assert stat_keys.ARXIV_BY_STATUS[enrichment_status.NONE] == "arxiv/unmatched"


def test_enrichment_statuses() -> None:
    lookup = {enrichment_status.DONE, enrichment_status.NONE, enrichment_status.PENDING}
    assert lookup == {"done", "none", "pending"} == set(get_args(enrichment_status.Status))
    stored = enrichment_status.ENRICHMENT_STATUSES  # what a document may hold
    assert stored == lookup | {"error"}
