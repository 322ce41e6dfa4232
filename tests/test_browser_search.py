"""End to end in headless Chromium: search, facets, researcher pages, history, keyboard.

Debian's ``/usr/bin/chromium`` driven by Playwright's Python API (never a
downloaded browser). The app runs under uvicorn in a thread, over the fixture
pages indexed into this test's cluster. Without Chromium these tests skip,
except under ``CI=true`` where they fail: CI must run them.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.types import ASGIApp

from scholarindex.indexing.client import build_client
from tests.support.search_site import SCRIPT_TEXT, FixtureSite, add_profiles, app_for, index_site

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


class LiveServer:
    """uvicorn serving ``app`` on 127.0.0.1 and a free port, in a background thread."""

    def __init__(self, app: ASGIApp):
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))  # bound before start: no race for the port
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self._thread = threading.Thread(target=self._server.run,
                                        kwargs={"sockets": [self._sock]}, daemon=True)

    def __enter__(self) -> LiveServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()


@pytest.fixture(scope="module")
def playwright() -> Iterator[object]:
    if not CHROMIUM.exists():
        message = (f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium, "
                   "or `make browser-deps` as root) to run the browser tests")
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def chromium(playwright: object) -> Iterator[object]:
    """One Chromium for the module; each test gets contexts (profiles) of its own."""
    launched = playwright.chromium.launch(  # type: ignore[attr-defined]
        executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
    yield launched
    launched.close()


@pytest.fixture
def browser(chromium: object) -> Iterator[object]:
    """``open(**options)``: a fresh browser context (no cookies, cache or storage) with
    ``options``, closed at teardown."""
    contexts: list[object] = []

    def open_context(**options: object) -> object:
        contexts.append(chromium.new_context(  # type: ignore[attr-defined]
            **{"viewport": {"width": 1280, "height": 900}, **options}))
        return contexts[-1]

    yield open_context
    for context in contexts:
        context.close()  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def site(module_opensearch_config, tmp_path_factory) -> FixtureSite:
    """The fixture pages indexed once for the module: the tests using it only read."""
    config = module_opensearch_config
    return index_site(build_client(config), config, tmp_path_factory.mktemp("site"))


@pytest.fixture(scope="module")
def server(site: FixtureSite) -> Iterator[LiveServer]:
    with LiveServer(app_for(site.config)) as live:
        yield live


@pytest.fixture
def page(browser: object, server: LiveServer) -> Iterator[object]:
    """A fresh tab; fails the test on any JavaScript error or console error (CSP included)."""
    tab = browser().new_page()  # type: ignore[operator]
    problems: list[str] = []
    tab.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    tab.on("console", lambda msg: problems.append(f"console: {msg.text}")
           if msg.type == "error" else None)
    tab.set_default_timeout(10_000)
    yield tab
    tab.close()
    assert problems == []


def total(page: object) -> int:
    return int(page.locator(".summary .total").get_attribute("data-total"))  # type: ignore[attr-defined]


def facet_counts(page: object) -> dict[tuple[str, str], int]:
    """(facet, value) -> count as shown."""
    rows = page.locator("a.facet-value").evaluate_all(  # type: ignore[attr-defined]
        "els => els.map(e => [e.dataset.facet, e.dataset.value,"
        " Number(e.querySelector('.count').dataset.count)])")
    return {(f, v): n for f, v, n in rows}


def test_search_facet_researcher_and_back(page, server):
    page.goto(server.url + "/")
    assert page.get_by_role("heading", name=re.compile(r"Search \d+ works")).is_visible()

    # Type a query and submit it.
    page.get_by_label("Search works, abstracts and researchers").fill("learning")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url(re.compile(r"\?q=learning$"))
    before_total = total(page)
    before_counts = facet_counts(page)
    assert before_total > 0 and before_counts

    # Click a facet value: results and counts change, and the count it showed was right.
    shown = before_counts[("source", "papercards")]
    assert 0 < shown < before_total
    page.get_by_role("checkbox", name=re.compile(r"^papercards")).click()
    page.wait_for_url(re.compile(r"source=papercards"))
    assert total(page) == shown
    assert page.get_by_role("checkbox", name=re.compile(r"^papercards")).get_attribute(
        "aria-checked") == "true"
    after_counts = facet_counts(page)
    assert after_counts != before_counts
    assert page.locator("ol.hits > li").count() == min(shown, 10)
    assert all("papercards" in text for text in page.locator(".listed-on").all_inner_texts())

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "search-page.png"), full_page=True)

    # Open a researcher page from a result, then go back.
    link = page.locator(".listed-on a").first
    name = link.inner_text()
    link.click()
    page.wait_for_url(re.compile(r"/researchers/"))
    assert page.get_by_role("heading", level=1).inner_text() == name
    assert page.get_by_role("heading", name="Shares works with").is_visible()
    page.go_back()
    page.wait_for_url(re.compile(r"\?q=learning&source=papercards$"))
    assert total(page) == shown
    assert page.get_by_role("checkbox", name=re.compile(r"^papercards")).get_attribute(
        "aria-checked") == "true"


def test_coauthors_link_both_ways(page, server, site):
    page.goto(server.url + f"/researchers/{site.researchers['Chao Jin']}")
    page.get_by_role("link", name="Yinmin Zhong").first.click()
    page.wait_for_url(re.compile(site.researchers["Yinmin Zhong"]))
    assert page.get_by_role("heading", level=1).inner_text() == "Yinmin Zhong"
    assert page.get_by_role("link", name="Chao Jin").first.is_visible()


@pytest.mark.parametrize("key", ["Space", "Enter"])
def test_keyboard_reaches_and_toggles_a_facet(page, server, key):
    page.goto(server.url + "/?q=learning")
    shown = facet_counts(page)
    for _ in range(40):
        page.keyboard.press("Tab")
        focused = page.evaluate("document.activeElement.getAttribute('role')")
        if focused == "checkbox":
            break
    else:
        pytest.fail("no facet value reachable with Tab")
    facet = page.evaluate("document.activeElement.dataset.facet")
    value = page.evaluate("document.activeElement.dataset.value")
    page.keyboard.press(key)
    page.wait_for_url(re.compile(f"{facet}="))
    assert total(page) == shown[(facet, value)]
    chosen = page.locator(f'a.facet-value[data-facet="{facet}"][aria-checked="true"]')
    assert chosen.get_attribute("data-value") == value


def test_autocomplete_suggests_and_navigates(page, server):
    page.goto(server.url + "/")
    box = page.get_by_role("combobox")
    box.press_sequentially("reli", delay=50)
    option = page.get_by_role("option").first
    option.wait_for()
    assert "ReLibra" in option.inner_text()
    assert box.get_attribute("aria-expanded") == "true"
    box.press("ArrowDown")
    box.press("Enter")
    page.wait_for_url(re.compile(r"\?q=ReLibra"))
    assert total(page) >= 1


def test_untrusted_abstract_stays_text_in_the_browser(page: Any, server: LiveServer) -> None:
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:  # a script that ran would open one
        dialogs.append(dialog.message)
        dialog.dismiss()
    page.on("dialog", on_dialog)
    page.goto(server.url + "/?q=untrusted")
    page.locator("details.full-abstract summary").first.click()
    assert SCRIPT_TEXT in page.locator("ol.hits").inner_text()
    assert page.locator("ol.hits script").count() == 0
    assert dialogs == []


def test_a_loosened_search_says_so_above_its_results(page, server):
    page.goto(server.url + "/")
    page.get_by_label("Search works, abstracts and researchers").fill("relibar")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url(re.compile(r"\?q=relibar$"))
    note = page.get_by_role("status").filter(has_text="No exact match")
    assert note.is_visible()
    assert "showing the closest works" in note.inner_text()
    assert page.locator("ol.hits > li").first.get_by_role("heading").inner_text().startswith(
        "ReLibra")
    assert page.locator("ol.hits mark").first.inner_text() == "ReLibra"  # what matched
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "search-fuzzy-note.png"), full_page=True)


def test_works_without_javascript(browser, server):
    tab = browser(java_script_enabled=False).new_page()
    tab.goto(server.url + "/?q=learning")
    shown = facet_counts(tab)[("source", "bzpeer")]
    tab.get_by_role("checkbox", name=re.compile(r"^bzpeer")).click()
    tab.wait_for_url(re.compile(r"source=bzpeer"))
    assert total(tab) == shown
    tab.get_by_label("Sort by").select_option("newest")
    tab.get_by_role("button", name="Sort").click()  # no auto-submit without JS
    tab.wait_for_url(re.compile(r"sort=newest"))
    years = [int(y) for y in tab.locator(".hit-meta .year").all_inner_texts()]
    assert years == sorted(years, reverse=True)


PHONE = {"width": 390, "height": 844}


def test_on_a_phone_the_filters_fold_behind_a_button(page, server):
    tab = page
    tab.set_viewport_size(PHONE)
    tab.goto(server.url + "/?q=learning")
    first_hit = tab.locator("ol.hits > li").first.bounding_box()
    assert first_hit is not None and first_hit["y"] + 40 < PHONE["height"], first_hit
    filters = tab.locator("nav.facets")
    toggle = tab.get_by_role("button", name="Filters", exact=True)
    assert filters.is_hidden()
    assert toggle.get_attribute("aria-expanded") == "false"
    assert toggle.get_attribute("aria-controls") == filters.get_attribute("id")
    ARTIFACTS.mkdir(exist_ok=True)
    tab.screenshot(path=str(ARTIFACTS / "search-phone.png"))

    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    assert filters.is_visible()
    shown = facet_counts(tab)[("source", "papercards")]
    tab.get_by_role("checkbox", name=re.compile(r"^papercards")).click()
    tab.wait_for_url(re.compile(r"source=papercards"))
    assert total(tab) == shown
    # The new page starts folded again, and the button says a filter is on.
    assert tab.locator("nav.facets").is_hidden()
    assert "1 on" in tab.get_by_role("button", name=re.compile("^Filters")).inner_text()
    tab.get_by_role("button", name=re.compile("^Filters")).click()
    tab.get_by_role("button", name=re.compile("^Filters")).click()
    assert tab.locator("nav.facets").is_hidden()


def test_on_a_wide_screen_the_filters_show_unasked(page, server):
    page.goto(server.url + "/?q=learning")  # 1280 wide
    assert page.locator("nav.facets").is_visible()
    assert page.get_by_role("checkbox", name=re.compile(r"^papercards")).is_visible()
    assert page.get_by_role("button", name="Filters").count() == 0  # not rendered: no role


def test_on_a_phone_without_javascript_the_filters_stay_open(browser, server):
    tab = browser(viewport=PHONE, java_script_enabled=False).new_page()
    tab.goto(server.url + "/?q=learning")
    assert tab.locator("nav.facets").is_visible()
    assert tab.locator("button.filters-toggle").is_hidden()  # it could not unfold anything


def test_same_person_on_the_other_site_links_both_ways(page, server, site, tmp_path):
    # Last in the module: it adds Haibin Lin's papercards profile (listing ResNeSt).
    add_profiles(site, tmp_path, {"pc Haibin Lin": (
        "Haibin Lin", "https://papercards.example/authors/haibin-lin.html", "papercards",
        ["ResNeSt: split attention networks"])})
    bz, pc = site.researchers["Haibin Lin"], site.researchers["pc Haibin Lin"]
    page.goto(server.url + f"/researchers/{bz}")
    also = page.locator(".also-on li")
    assert also.count() == 1
    assert also.inner_text().startswith("Also on papercards: Haibin Lin")
    also.get_by_role("link", name="Haibin Lin").click()
    page.wait_for_url(re.compile(pc))
    assert page.get_by_role("heading", level=1).inner_text() == "Haibin Lin"
    page.locator(".also-on").get_by_role("link", name="Haibin Lin").click()
    page.wait_for_url(re.compile(bz))
    assert "Priya Raghunathan" not in page.locator(".also-on").inner_text()
