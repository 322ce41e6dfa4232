"""Bad input never raises: random, truncated, shuffled and mangled pages."""

from datetime import date
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crawler.extract import parse_profile
from crawler.extract.lines import page_text

SEEDS = sorted((Path(__file__).parent.parent / "fixtures" / "seeds").glob("*.txt"))
SEED_TEXTS = [path.read_text(encoding="utf-8") for path in SEEDS]
TODAY = date(2026, 11, 22)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(body: str | bytes, content_type: str | None = None) -> None:
    page = parse_profile("https://example.org/p/x", body, content_type, TODAY)
    for work in page.works:
        assert work.title and work.work_id
    if page.researcher is not None:
        assert page.researcher.name


@FAST
@given(st.sampled_from(SEED_TEXTS), st.floats(0, 1))
def test_truncated_pages(text: str, fraction: float) -> None:
    check(text[: int(len(text) * fraction)])


@FAST
@given(st.sampled_from(SEED_TEXTS), st.randoms(use_true_random=False))
def test_shuffled_lines(text: str, rng) -> None:
    lines = text.splitlines()
    rng.shuffle(lines)
    check("\n".join(lines))


@FAST
@given(st.text(max_size=3000))
def test_random_text(text: str) -> None:
    check(text)
    check("<html><body><div>" + text + "</div></body></html>", "text/html")


@FAST
@given(st.binary(max_size=3000))
def test_random_bytes(body: bytes) -> None:
    check(body)
    check(body, "text/html; charset=utf-16")


@FAST
@given(
    st.sampled_from(SEED_TEXTS),
    st.lists(st.tuples(st.integers(0, 10_000), st.text(max_size=20)), max_size=8),
)
def test_spliced_junk(text: str, edits: list[tuple[int, str]]) -> None:
    for position, junk in edits:
        position %= max(1, len(text))
        text = text[:position] + junk + text[position:]
    check(text)


def test_deeply_nested_html_does_not_recurse() -> None:
    check("<div>" * 50_000 + "Jialiang Cheng" + "</div>" * 50_000, "text/html")


def test_empty_and_binary_pages() -> None:
    for body in (b"", b"\x00" * 100, b"\xff\xfe\x00", "   \n\n "):
        page = parse_profile("https://example.org/p/x", body, None, TODAY)
        assert page.layout is None and page.researcher is None and page.works == []


def test_private_use_characters_in_the_markup_stay_text() -> None:
    """Lines are cut at a private-use character the page lacks, chosen from its markup:
    one the page holds as itself or as a numeric reference is text, not a line break."""
    markup = ("<html><body><p>one \ue000 &#xE001; &#0057346; &#x0000E003b two</p>"
              "<div>three &#" + "9" * 5000 + "; four</div></body></html>").encode()
    assert page_text(markup, "text/html").lines == [
        "one \ue000 \ue001 \ue002 \U000e003b two", "three \ufffd four"]
