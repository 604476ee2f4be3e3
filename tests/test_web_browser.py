"""End to end: headless Chromium drives the web demo through a chat and a replay.

Needs Debian's `chromium` and `chromium-driver` and pip's `selenium`; skipped
(with the reason) when any is missing.  Saves a screenshot to a temporary folder.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from demo.browser import find_chromium
from demo_support import IMG_TITLE, XSS_TITLE, evaluator_record, start_web, write_catalog

ROOT = Path(__file__).resolve().parent.parent
_FOUND = find_chromium()
pytestmark = pytest.mark.skipif(isinstance(_FOUND, str), reason=f"browser test needs Chromium: {_FOUND}")


@pytest.fixture()
def site(tmp_path):
    catalog, dataset, facts = write_catalog(tmp_path)
    server, url = start_web(catalog, {"tiny": dataset})
    from demo.browser import make_driver

    driver = make_driver(tmp_path / "chromium-profile", 1400, 900)
    driver.set_page_load_timeout(30)
    try:
        yield driver, url, catalog, dataset
    finally:
        driver.quit()
        server.stop()


def _no_alert(driver) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018 (the access is the check)


def test_chat_and_replay_in_a_real_browser(site, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    driver, url, catalog, dataset = site
    wait = WebDriverWait(driver, 20)
    driver.get(url + "/")
    wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")

    # ---- a three-turn chat ----
    messages = ["I'm looking for Active Pants Sweatpants, but I'm still exploring.",
                "For that, what matters is: wool.", "Something black, please."]
    box = driver.find_element(By.ID, "chat-input")
    for n, text in enumerate(messages, 1):
        box.send_keys(text)
        driver.find_element(By.ID, "chat-send").click()
        wait.until(lambda d, n=n: len(d.find_elements(By.CSS_SELECTOR, "#chat-log .msg.agent")) == n)
    users = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#chat-log .msg.user")]
    assert [u.split("\n", 1)[1] for u in users] == messages
    card_groups = driver.find_elements(By.CSS_SELECTOR, "#chat-log .cards")
    assert len(card_groups) == 3
    first = card_groups[0].find_element(By.CSS_SELECTOR, ".pcard")
    # the <script> title is text on the page, not markup
    assert first.find_element(By.CSS_SELECTOR, ".title").text == XSS_TITLE
    assert first.find_element(By.CSS_SELECTOR, ".price").text == "n/a"
    assert first.find_element(By.CSS_SELECTOR, ".rating").text == "★ 3.5 (5,000)"
    _no_alert(driver)
    assert driver.execute_script("return document.scripts.length") == 1
    assert driver.execute_script("return document.querySelectorAll('.pcard script, .pcard img').length") == 0

    # the side panel shows the last turn's decisions
    panel = driver.find_element(By.ID, "panel")
    assert panel.find_element(By.TAG_NAME, "h2").text.startswith("Turn 3")
    for heading in ("CONSTRAINTS", "CANDIDATE FUNNEL", "VALUE OF EACH QUESTION", "COMMIT"):
        assert heading in panel.text
    # clicking turn 2's reply shows turn 2: 'wool' was accepted, the funnel and question bars are drawn
    driver.find_elements(By.CSS_SELECTOR, "#chat-log .msg.agent")[1].click()
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#panel h2").text.startswith("Turn 2"))
    chips = [c.text for c in panel.find_elements(By.CSS_SELECTOR, ".chip.ok")]
    assert "material wool" in chips
    assert len(panel.find_elements(By.CSS_SELECTOR, ".brow.funnel")) >= 3
    assert panel.find_elements(By.CSS_SELECTOR, ".qchart .brow")
    assert panel.find_element(By.CSS_SELECTOR, ".commit b").text.startswith("show ")
    driver.find_elements(By.CSS_SELECTOR, "#chat-log .msg.agent")[2].click()
    shot = tmp_path / "demo_web.png"          # the committed screenshot is made by scripts.screenshot_demo
    assert driver.save_screenshot(str(shot)) and shot.read_bytes()[:4] == b"\x89PNG"

    # a new session about sneakers: the <img onerror> title must stay text too
    driver.find_element(By.ID, "chat-reset").click()
    wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#chat-log .msg.agent"))
    box.send_keys("I'm looking for Fashion Sneakers Running Sneakers, but I'm still exploring.")
    driver.find_element(By.ID, "chat-send").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#chat-log .msg.agent"))
    assert driver.find_element(By.CSS_SELECTOR, "#chat-log .pcard .title").text == IMG_TITLE
    assert "Turn 1" in driver.find_element(By.CSS_SELECTOR, "#panel h2").text
    assert driver.execute_script("return document.querySelectorAll('img').length") == 0
    _no_alert(driver)

    # ---- one replay, stepped to the end ----
    driver.find_element(By.ID, "tab-replay").click()
    Select(driver.find_element(By.ID, "rp-dataset")).select_by_value("tiny")
    wait.until(lambda d: len(Select(d.find_element(By.ID, "rp-sample")).options) == 3)
    Select(driver.find_element(By.ID, "rp-sample")).select_by_value("tiny_0002")
    driver.find_element(By.ID, "rp-start").click()
    wait.until(lambda d: d.find_element(By.ID, "rp-next").is_enabled())
    assert driver.find_element(By.CSS_SELECTOR, "#replay-log .pcard.target .title").text == "Tiny pants item 3"
    for _ in range(10):
        driver.find_element(By.ID, "rp-next").click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#replay-log .msg.outcome")
                   or d.find_element(By.ID, "rp-next").is_enabled())
        if driver.find_elements(By.CSS_SELECTOR, "#replay-log .msg.outcome"):
            break
    rec = evaluator_record(catalog, dataset, "tiny_0002")
    assert rec["hit"], "the tiny browsing session is found (turn 2 on this catalog)"
    outcome = driver.find_element(By.CSS_SELECTOR, "#replay-log .msg.outcome").text
    assert outcome == f"Outcome: hit at rank {rec['rank']} on turn {rec['turn']}"
    shown = [e.text.split("\n", 1)[1] for e in driver.find_elements(By.CSS_SELECTOR, "#replay-log .msg.user")]
    assert shown == [t["customer"] for t in rec["transcript"]]
    assert driver.find_elements(By.CSS_SELECTOR, "#replay-log .cards .pcard.target")

    # an intent-override replay: the target listed before the override is flagged as not counting
    Select(driver.find_element(By.ID, "rp-sample")).select_by_value("tiny_0003")
    driver.find_element(By.ID, "rp-start").click()
    wait.until(lambda d: d.find_element(By.ID, "rp-next").is_enabled())
    driver.find_element(By.ID, "rp-next").click()
    wait.until(lambda d: "does not count yet" in d.find_element(By.ID, "replay-log").text)
    _no_alert(driver)


def test_page_waits_for_the_agent_to_load(tmp_path):
    """The page is served before the agent is built; it says so and starts once the API answers."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from demo.browser import make_driver
    from demo.session import ProductLookup, build_agent
    from demo.web import DemoApp, render_page
    from demo.web_app import WebState, create_app
    from demo.web_server import BackgroundServer

    catalog, dataset, _ = write_catalog(tmp_path)
    state = WebState(render_page(str(catalog)))
    server = BackgroundServer(create_app(state))
    driver = make_driver(tmp_path / "chromium-profile", 1200, 800)
    try:
        wait = WebDriverWait(driver, 20)
        driver.get(server.url + "/")
        wait.until(lambda d: "The agent is loading" in d.find_element(By.ID, "chat-log").text)
        assert driver.find_element(By.TAG_NAME, "body").get_attribute("data-ready") is None
        state.demo = DemoApp(build_agent(catalog), ProductLookup(catalog), {"tiny": dataset}, str(catalog))
        wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
        assert "The agent is ready." in driver.find_element(By.ID, "chat-log").text
        _no_alert(driver)
    finally:
        driver.quit()
        server.stop()
