"""The explorer's classifications in chromium: colour by tag (the legend names the tags) and
an asset's page, opened by a click, saying each tag's why and where a tag stopped."""

from __future__ import annotations

from typing import Any

from serve_fixtures import TOKEN, Server
from test_explorer_browser import browser, by_css, wait  # skips without selenium or chromium
from test_explorer_tags import EMAIL, RAW, STG, server

__all__ = ["browser", "server"]  # fixtures


def panel(driver: Any) -> str:
    """The asset page's text."""
    return str(driver.find_element("id", "asset").text)


def test_colour_by_tag_and_the_why_on_click(server: Server, browser: Any) -> None:
    browser.get(server.url + "/")
    browser.execute_script("sessionStorage.setItem('lineagegraph-token', arguments[0])", TOKEN)
    browser.refresh()
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", "colour")).select_by_value("tag")
    browser.find_element("id", "search").send_keys(STG + "\n")
    wait(browser, lambda d: [s.text for s in by_css(d, "#legend span")] == ["pii=email"])
    node = next(g for g in by_css(browser, "#canvas g.node") if g.get_attribute("data-urn") == RAW)
    node.click()
    page = wait(browser, lambda d: "Classifications" in (t := panel(d)) and RAW in t and t)
    assert "Classifications (1)" in page and "EMAIL" in page and "own" in page
    assert "e-mail" in page  # the reason stated
    browser.find_element("id", "search").clear()
    browser.find_element("id", "search").send_keys(STG + "\n")
    page = wait(browser, lambda d: "masked by SHA2" in (t := panel(d)) and t)
    assert f"1 hop(s) from {EMAIL}" in page and "derived" in page
    assert "Stopped on the way" in page
