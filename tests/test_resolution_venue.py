"""core.resolution.venue: preprints, journals and proceedings, as printed."""

from __future__ import annotations

import pytest

from scholarindex.core.resolution.venue import is_preprint, related, same_venue, venue_kind


@pytest.mark.parametrize(("venue", "kind"), [
    ("VLDB J.", "journal"),
    ("The VLDB Journal &mdash; The International Journal on Very Large Data Bases", "journal"),
    ("ACM Trans. Database Syst.", "journal"),
    ("ACM Transactions on Database Systems (TODS)", "journal"),
    ("SIGMOD Record", "journal"),
    ("IEEE Transactions on Information Theory", "journal"),
    ("SIGMOD Conference", "proceedings"),
    ("International Conference on Management of Data", "proceedings"),
    ("Proc. VLDB Workshop", "proceedings"),
    ("VLDB", None),  # an acronym alone says neither
    ("Very Large Data Bases", None),
    ("Nature Communications", None),
    ("Journal of Proceedings", None),  # says both
    ("arXiv", None),
    ("CoRR", None),
    ("", None),
    (None, None),
])
def test_venue_kind(venue: str | None, kind: str | None) -> None:
    assert venue_kind(venue) == kind


def test_preprints() -> None:
    assert is_preprint("arXiv") and is_preprint("arXiv preprint arXiv:2101.00001")
    assert is_preprint("bioRxiv") and is_preprint("SSRN Electronic Journal")
    assert not is_preprint("Harvard Law Review") and not is_preprint(None)
    assert not is_preprint("Hallucination in LLMs Workshop")  # "hal" only as a word
    assert venue_kind("SSRN Electronic Journal") is None


@pytest.mark.parametrize(("a", "b"), [
    ("J Pediatr Surg", "Journal of Pediatric Surgery"),
    ("Clin Epidemiol", "Clinical Epidemiology"),
    ("BMJ", "BMJ (Online)"),
    ("PLoS ONE", "PLoS ONE [Electronic Resource]"),
    ("Journal of Clinical Oncology", "Journal of clinical oncology : official journal of the ASCO"),
    ("Journal of Tongji Medical University", "Journal of Tongji Medical University = T"),
    ("Gan to Kagaku Ryoho [Japanese Journal of", "Gan to kagaku ryoho. Cancer & chemothera"),
    ("Cancer epidemiology, biomarkers & preven", "Cancer Epidemiology Biomarkers and Preve"),
    ("J. Clin. Oncol.", "Journal of Clinical Oncology"),
])
def test_one_venue_printed_two_ways(a: str, b: str) -> None:
    assert same_venue(a, b) and same_venue(b, a)


@pytest.mark.parametrize(("a", "b"), [
    ("Cancer", "Cancer Cytopathology"),  # a word more: another journal
    ("VLDB", "VLDB J."),
    ("SIGMOD Conference", "SIGMOD Record"),
    ("Journal of Clinical Oncology", "Journal of Clinical Virology"),
    ("National Medical Journal of China", "Zhonghua Yi Xue Za Zhi"),  # a translation
    ("", "Cancer"),
])
def test_two_venues(a: str, b: str) -> None:
    assert not same_venue(a, b) and not same_venue(b, a)


@pytest.mark.parametrize(("a", "b"), [
    ("VLDB", "VLDB J."),  # a conference and its journal
    ("Journal of Clinical Oncology", "Journal of Thoracic Oncology"),
    ("Langenbecks Arch Surg", "Langenbeck's Archives of Surgery"),
    ("Arthritis care & research", "Arthritis Care and Research"),
    ("Proceedings", "Journal"),  # nothing but kind words: says nothing
    ("", "Cancer"),
])
def test_related_venues(a: str, b: str) -> None:
    assert related(a, b) and related(b, a)


@pytest.mark.parametrize(("a", "b"), [
    ("International Journal of Rheumatic Diseases", "Arthritis Care and Research"),
    ("Infectious Diseases in Obstetrics and Gynecology", "Revue Medicale Libanaise"),
    ("SIGMOD Conference", "VLDB J."),
    ("National Medical Journal of China", "Zhonghua Yi Xue Za Zhi"),  # a translation, too
])
def test_unrelated_venues(a: str, b: str) -> None:
    assert not related(a, b) and not related(b, a)
