"""The explorer in a real browser: Debian's chromium driven by selenium through chromium-driver,
against a real `lineagegraph serve` with a token. Search, open an asset, expand a node, follow
a path, and take a screenshot."""

from __future__ import annotations

import shutil
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from explorer_fixtures import CTRL, DAILY, EXPORT, IMG, OLD, ORDERS, RAW
from serve_fixtures import TOKEN, Server

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the dev extra")
Select = pytest.importorskip("selenium.webdriver.support.ui").Select
Keys = pytest.importorskip("selenium.webdriver.common.keys").Keys
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and DRIVER),
    reason="needs Debian's chromium and chromium-driver (scripts/test.sh installs them as root)",
)
WIDTH, HEIGHT = 1400, 900  # the size the explorer is checked at (issue 22)


@pytest.fixture
def browser() -> Iterator[Any]:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={WIDTH},{HEIGHT}",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()


def wait(driver: Any, check: Any, seconds: float = 20) -> Any:
    """Poll until `check(driver)` is truthy; the page redraws, so an element may go stale."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    ignored = (StaleElementReferenceException,)
    until = WebDriverWait(driver, seconds, poll_frequency=0.1, ignored_exceptions=ignored)
    return until.until(lambda d: check(d))


def by_css(driver: Any, css: str) -> list[Any]:
    return driver.find_elements("css selector", css)


def drawn(driver: Any) -> set[str]:
    return {g.get_attribute("data-urn") for g in by_css(driver, "#canvas g.node")}


def viewport(driver: Any) -> tuple[int, int]:
    return tuple(driver.execute_script("return [window.innerWidth, window.innerHeight]"))


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_search_open_expand_and_screenshot(
    explorer_server: Server, browser: Any, tmp_path: Path
) -> None:
    browser.get(explorer_server.url + "/")
    assert browser.title == "lineagegraph explorer"
    assert not browser.find_element("id", "path-form").is_displayed()  # the other tab
    blank = tmp_path / "blank.png"
    assert browser.save_screenshot(str(blank))

    # without the token the server's 401 reason shows, and what to do about it
    box = browser.find_element("id", "search")
    box.send_keys("DAILY")
    wait(browser, lambda d: "Bearer" in d.find_element("id", "message").text)
    assert "Enter the server's token" in browser.find_element("id", "message").text

    browser.find_element("id", "token").send_keys(TOKEN)
    browser.find_element("css selector", "#token-form button").click()
    depth = browser.find_element("id", "depth")
    depth.clear()
    depth.send_keys("1")
    box.clear()
    box.send_keys("daily")  # suggestions as you type: urns holding the text, any case
    shown = lambda d: [li for li in by_css(d, "#suggestions li") if li.is_displayed()]  # noqa: E731
    items = wait(browser, shown)
    assert [li.text for li in items] == [EXPORT, DAILY]
    box.send_keys(Keys.ARROW_DOWN, Keys.ARROW_DOWN, Keys.ENTER)  # the keys pick the second

    # one hop both ways around DAILY_SALES, with its asset page
    wait(browser, lambda d: drawn(d) == {DAILY, ORDERS, EXPORT})
    assert "lineage of " + DAILY in browser.find_element("id", "summary").text
    panel = wait(
        browser,
        lambda d: (
            d.find_element("id", "asset")
            if "DAILY_SALES" in d.find_element("id", "asset").text
            else None
        ),
    )
    assert DAILY in panel.text and "mart" not in panel.text.split("Transformations")[0]

    # a click on ORDERS grows the picture upstream of it and opens its page
    node = next(
        g for g in by_css(browser, "#canvas g.node") if g.get_attribute("data-urn") == ORDERS
    )
    node.click()
    wait(browser, lambda d: drawn(d) == {DAILY, ORDERS, EXPORT, RAW})
    wait(browser, lambda d: "not_null" in d.find_element("id", "asset").text)
    page = browser.find_element("id", "asset").text
    assert "quality: fail" in page
    assert "load\nwrites\n2" in page.replace("\t", "\n") or "load writes 2" in page
    assert "mart" in page and "row_count" in page and "AMOUNT" in page
    expanded = [g.get_attribute("data-urn") for g in by_css(browser, "#canvas g.node.expanded")]
    assert expanded == [ORDERS]
    legend = [s.text for s in by_css(browser, "#legend span")]
    assert legend == ["pass", "warn", "error", "fail", "unknown"]  # ORDERS has a quality

    # colour by system instead: the legend names the systems
    Select(browser.find_element("id", "colour")).select_by_value("system")
    wait(browser, lambda d: [s.text for s in by_css(d, "#legend span")] == ["s3", "snowflake"])
    assert drawn(browser) == {DAILY, ORDERS, EXPORT, RAW}  # the expansion is kept

    shot = tmp_path / "explorer.png"
    assert browser.save_screenshot(str(shot))
    assert png_size(shot) == png_size(blank) == viewport(browser)
    # four boxes, edges and a filled asset page compress far worse than the empty page
    assert shot.stat().st_size > 20_000
    assert shot.stat().st_size > 1.5 * blank.stat().st_size

    # the path between two assets
    browser.find_element("id", "tab-path").click()
    assert not browser.find_element("id", "lineage-form").is_displayed()
    browser.find_element("id", "path-from").send_keys("s3://raw/")
    pick = wait(browser, lambda d: [li for li in by_css(d, "#path-form li") if li.is_displayed()])
    assert [li.text for li in pick] == [RAW]
    pick[0].click()
    assert browser.find_element("id", "path-from").get_attribute("value") == RAW
    browser.find_element("id", "path-to").send_keys(EXPORT)
    browser.find_element("css selector", "#path-form button").click()
    wait(browser, lambda d: "paths from " + RAW in d.find_element("id", "summary").text)
    assert drawn(browser) == {RAW, ORDERS, DAILY, EXPORT}


def test_a_name_not_found_lists_the_nearest_and_deleted_on_request(
    explorer_server: Server, browser: Any
) -> None:
    browser.get(explorer_server.url + "/")
    browser.execute_script("sessionStorage.setItem('lineagegraph-token', arguments[0])", TOKEN)
    browser.refresh()
    browser.find_element("id", "search").send_keys("DAILY_SALEZ\n")
    text = lambda d: d.find_element("id", "message").text  # noqa: E731
    message = wait(browser, lambda d: "Did you mean" in text(d) and text(d))
    assert "no asset matches 'DAILY_SALEZ'" in message
    assert DAILY in message.split("Did you mean:")[1]

    # Enter looks the typed name up as the CLI does; deleted assets show only when asked for
    box = browser.find_element("id", "search")
    box.clear()
    box.send_keys("DB.S.DAILY_SALES\n")
    wait(browser, lambda d: drawn(d) == {RAW, ORDERS, DAILY, EXPORT})
    browser.find_element("id", "deleted").click()
    wait(browser, lambda d: drawn(d) == {RAW, ORDERS, DAILY, EXPORT, OLD})
    logs = [e for e in browser.get_log("browser") if "Content Security Policy" in e["message"]]
    assert not logs, logs  # nothing the page does is blocked by its own CSP


def column_urns(driver: Any, css: str) -> list[str]:
    """The urns (each row's tooltip) of the column rows matching `css`, in drawing order."""
    script = (
        "return [...document.querySelectorAll(arguments[0])].map("
        "(g) => g.querySelector('title').textContent)"
    )
    return driver.execute_script(script, css)


def test_the_column_view_lights_up_a_columns_lineage(
    explorer_server: Server, browser: Any, tmp_path: Path
) -> None:
    browser.get(explorer_server.url + "/")
    browser.execute_script("sessionStorage.setItem('lineagegraph-token', arguments[0])", TOKEN)
    browser.refresh()
    blank = tmp_path / "blank.png"
    assert browser.save_screenshot(str(blank))
    box = browser.find_element("id", "search")
    box.send_keys("DB.S.DAILY_SALES\n")
    wait(browser, lambda d: drawn(d) == {RAW, ORDERS, DAILY, EXPORT})
    assert not by_css(browser, "#canvas g.column")
    assert not browser.find_element("id", "suggestions").is_displayed()  # Enter closed them

    browser.find_element("id", "columns").click()  # the column view
    wait(browser, lambda d: len(by_css(d, "#canvas g.column")) == 11)
    assert drawn(browser) == {RAW, ORDERS, DAILY, EXPORT}
    texts = [g.text for g in by_css(browser, "#canvas g.column text")]
    # a name with markup is text on the page; control characters are written out
    assert IMG in texts and "tab\\there\\x1f" in texts and CTRL not in texts
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0

    amount = next(
        g
        for g in by_css(browser, "#canvas g.column")
        if g.find_element("css selector", "text").text == "AMOUNT"
    )
    amount.click()
    wait(browser, lambda d: column_urns(d, "#canvas g.column.picked") == [f"{ORDERS}#AMOUNT"])
    assert column_urns(browser, "#canvas g.column.upstream") == [f"{RAW}#amount"]
    assert sorted(column_urns(browser, "#canvas g.column.downstream")) == [
        f"{EXPORT}#total",
        f"{DAILY}#TOTAL",
    ]
    assert len(by_css(browser, "#canvas path.feed.lit")) == 3  # amount->AMOUNT->TOTAL->total
    assert len(by_css(browser, "#canvas path.feed")) == 7
    picked = browser.find_element("id", "picked").text
    assert picked == (
        f"Column AMOUNT of {ORDERS}: 1 column(s) upstream, 2 downstream on this picture"
    )
    # dimmed: every column row but the four lit ones
    dim = browser.execute_script(
        "return [...document.querySelectorAll('#canvas g.column')]"
        ".filter((g) => getComputedStyle(g).opacity < 0.5).length"
    )
    assert dim == 11 - 4

    shot = tmp_path / "columns.png"
    assert browser.save_screenshot(str(shot))
    assert png_size(shot) == png_size(blank) == viewport(browser)
    assert shot.stat().st_size > 20_000 and shot.stat().st_size > 1.5 * blank.stat().st_size

    # the picked column stays lit when the picture is redrawn; unticked, the columns go
    Select(browser.find_element("id", "colour")).select_by_value("system")
    wait(browser, lambda d: [s.text for s in by_css(d, "#legend span")] == ["s3", "snowflake"])
    wait(browser, lambda d: column_urns(d, "#canvas g.column.picked") == [f"{ORDERS}#AMOUNT"])
    browser.find_element("id", "columns").click()
    wait(browser, lambda d: not by_css(d, "#canvas g.column") and len(drawn(d)) == 4)
    logs = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not logs, logs  # no script error, nothing blocked by the page's CSP


def test_the_orphan_table_sorts_and_totals(
    explorer_server: Server, browser: Any, tmp_path: Path
) -> None:
    browser.get(explorer_server.url + "/")
    browser.execute_script("sessionStorage.setItem('lineagegraph-token', arguments[0])", TOKEN)
    browser.refresh()
    browser.find_element("id", "tab-orphans").click()
    assert not browser.find_element("id", "explore").is_displayed()
    Select(browser.find_element("id", "by")).select_by_value("dataset")
    browser.find_element("css selector", "#orphans-form button").click()

    def datasets(d: Any) -> list[str]:
        return [
            tr.find_elements("css selector", "td")[1].text
            for tr in by_css(d, "#report-table tbody tr")
        ]

    # most expensive first, as the CLI ranks them
    wait(
        browser,
        lambda d: datasets(d) == ["s3://other/x", "s3://lake/raw/orders", "s3://lake/raw/events"],
    )
    headers = [th.text for th in by_css(browser, "#report-table th")]
    assert headers[:4] == ["bucket", "dataset", "objects", "bytes"] and "monthly_usd" in headers
    total = by_css(browser, "#report-table tfoot td")
    assert total[0].text == "Total" and total[headers.index("objects")].text == "3"
    # sizes and money for people, the report's exact values on hover
    assert total[headers.index("bytes")].text == "6.00 GiB"
    assert total[headers.index("bytes")].get_attribute("title") == f"{6 * 2**30:,} bytes"
    assert total[headers.index("monthly_usd")].text == "$0.12"
    assert total[headers.index("monthly_usd")].get_attribute("title") == "0.118600285 USD a month"
    assert "gib" not in headers  # the bytes again: in the JSON, not a second column
    first = by_css(browser, "#report-table tbody tr")[0].find_elements("css selector", "td")
    assert first[headers.index("oldest_modified")].text == "2023-10-15"
    assert first[headers.index("oldest_modified")].get_attribute("title").endswith("Z")
    heights = browser.execute_script(
        "return [...document.querySelectorAll('#report-table tbody td')]"
        ".map((td) => td.getBoundingClientRect().height)"
    )
    assert max(heights) < 1.6 * min(heights)  # nothing wraps onto a second line

    # the chart above the table: cost by storage class and by bucket, most first (the rows
    # here are per dataset: the chart asks for the report by both)
    captions = [f.text for f in by_css(browser, "#report-chart figcaption")]
    assert captions == ["Monthly cost by storage class", "Monthly cost by bucket"]
    bars = browser.execute_script(
        "return [...document.querySelectorAll('#report-chart figure')].map((f) => "
        "[...f.querySelectorAll('g.bar')].map((g) => [...g.querySelectorAll('text')]"
        ".map((t) => t.textContent)))"
    )
    assert bars == [
        [["STANDARD", "$0.12"], ["GLACIER", "$0.0036"]],
        [["other", "$0.069"], ["lake", "$0.050"]],
    ]
    chart = browser.find_element("id", "report-chart").rect
    table = browser.find_element("id", "report-table").rect
    assert chart["y"] + chart["height"] <= table["y"]
    assert table["y"] + table["height"] <= viewport(browser)[1]  # all on the first screen
    sorted_by = by_css(browser, "#report-table th[aria-sort]")
    assert [(th.text, th.get_attribute("aria-sort")) for th in sorted_by] == [
        ("monthly_usd", "descending")
    ]

    header = next(th for th in by_css(browser, "#report-table th") if th.text == "dataset")
    header.click()  # text: ascending first
    wait(
        browser,
        lambda d: datasets(d) == ["s3://lake/raw/events", "s3://lake/raw/orders", "s3://other/x"],
    )
    next(th for th in by_css(browser, "#report-table th") if th.text == "dataset").click()
    wait(
        browser,
        lambda d: datasets(d) == ["s3://other/x", "s3://lake/raw/orders", "s3://lake/raw/events"],
    )
    shot = tmp_path / "orphans.png"
    assert browser.save_screenshot(str(shot)) and png_size(shot) == viewport(browser)


# The picture's nodes, its labels and its box, as the page lays them out.
GEOMETRY = """
const box = document.getElementById('canvas').getBoundingClientRect();
const rect = (e) => { const r = e.getBoundingClientRect();
  return [r.left, r.top, r.right, r.bottom]; };
const canvas = document.getElementById('canvas');
return {box: [box.left, box.top, box.right, box.bottom],
        nodes: [...document.querySelectorAll('#canvas g.node')].map(rect),
        scroll: [canvas.scrollWidth - canvas.clientWidth,
                 canvas.scrollHeight - canvas.clientHeight],
        viewBox: document.querySelector('#canvas svg').getAttribute('viewBox')};
"""


def test_the_whole_answer_shows_on_first_paint(explorer_server: Server, browser: Any) -> None:
    """At 1,400x900 the picture fits its box: every node inside it and on the screen, no
    scrollbar, the picture filling the box's width; edges name their jobs; wheel, buttons and
    dragging zoom and pan, and a drag does not click what it started on."""
    browser.set_window_size(1400, 900)
    browser.get(explorer_server.url + "/")
    browser.execute_script("sessionStorage.setItem('lineagegraph-token', arguments[0])", TOKEN)
    browser.refresh()
    browser.find_element("id", "search").send_keys("DB.S.DAILY_SALES\n")
    wait(browser, lambda d: drawn(d) == {RAW, ORDERS, DAILY, EXPORT})
    shape = browser.execute_script(GEOMETRY)
    left, top, right, bottom = shape["box"]
    width, height = viewport(browser)
    assert shape["scroll"] == [0, 0]  # nothing hidden behind a scrollbar
    assert left >= 0 and right <= width and bottom <= height
    for x1, y1, x2, y2 in shape["nodes"]:
        assert left <= x1 < x2 <= right and top <= y1 < y2 <= bottom, (shape, x1, y1)
    drawn_width = max(n[2] for n in shape["nodes"]) - min(n[0] for n in shape["nodes"])
    assert drawn_width > 0.85 * (right - left)  # the picture fills its box, not a corner

    labels = [t.text for t in by_css(browser, "#canvas text.edge-label")]
    assert sorted(labels) == ["export", "load", "mart"]  # each edge names its job
    tip = browser.execute_script(
        "return [...document.querySelectorAll('#canvas text.edge-label title')]"
        ".map((t) => t.textContent)"
    )
    assert "openlineage://airflow/mart" in tip

    def box_width(d: Any) -> float:
        return float(d.execute_script(GEOMETRY)["viewBox"].split()[2])

    fitted = box_width(browser)
    browser.find_element("id", "zoom-in").click()
    assert box_width(browser) < 0.9 * fitted
    browser.find_element("id", "zoom-fit").click()
    assert abs(box_width(browser) - fitted) < 1
    wheel = (
        "document.getElementById('canvas').dispatchEvent(new WheelEvent('wheel', "
        "{deltaY: 300, clientX: 300, clientY: 400, bubbles: true, cancelable: true}))"
    )
    browser.execute_script(wheel)
    assert box_width(browser) > 1.2 * fitted  # the wheel zooms out

    from selenium.webdriver.common.action_chains import ActionChains

    browser.find_element("id", "zoom-fit").click()
    before = browser.execute_script(GEOMETRY)["viewBox"].split()
    node = next(
        g for g in by_css(browser, "#canvas g.node") if g.get_attribute("data-urn") == ORDERS
    )
    ActionChains(browser).click_and_hold(node).move_by_offset(-120, 0).release().perform()
    after = browser.execute_script(GEOMETRY)["viewBox"].split()
    assert float(after[0]) > float(before[0]) + 50 and after[2] == before[2]  # panned
    assert not by_css(browser, "#canvas g.node.expanded")  # the drag expanded nothing
    logs = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not logs, logs
