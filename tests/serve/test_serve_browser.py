"""The editors' page as a person uses it: headless Chromium, driven by Selenium through Debian's
chromedriver, against a real ``neardup serve`` on 127.0.0.1.

Skipped with a clear reason when chromium, chromedriver or selenium is missing, unless
``NEARDUP_REQUIRE_CHROMIUM=1`` (CI sets it): then a missing one fails the test.
"""

from __future__ import annotations

import os
import shutil

import pytest
from support.corpus import reprint, text
from support.serve_process import start_service

REQUIRE_ENV = "NEARDUP_REQUIRE_CHROMIUM"
MARK_COLOUR = (0xFF, 0xB8, 0xB8)  # the page's <mark> background
WIDTH, HEIGHT = 1280, 1400


def _missing(message: str):
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{message}, and {REQUIRE_ENV}=1 requires it")
    pytest.skip(message)


@pytest.fixture
def browser(tmp_path):
    try:
        from selenium import webdriver
    except ImportError:
        _missing("selenium is not installed (pip install selenium, or the test extra)")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        _missing("chromium and chromedriver are not both installed (apt-get install chromium chromium-driver)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={WIDTH},{HEIGHT}",
        f"--user-data-dir={tmp_path / 'profile'}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


def wait_for(driver, condition, what: str, timeout: float = 20):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(d), message=what)


def test_an_editor_types_a_reprint_sees_it_marked_then_adds_a_new_entry(browser, tmp_path):
    from selenium.webdriver.common.by import By

    service = start_service("memory://")
    try:
        for key in ("library", "marathon", "rice"):
            assert service.add(key, text(key)).status == 201
        browser.get(f"http://127.0.0.1:{service.port}/")
        wait_for(
            browser, lambda d: "3 entries" in d.find_element(By.ID, "stats").text, "the page shows the store's size"
        )

        copy = reprint("library")
        browser.find_element(By.ID, "key").send_keys("library-copy")
        browser.find_element(By.ID, "text").send_keys(copy)  # typed: the page checks as the editor types
        cards = wait_for(
            browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#results .entry"), "similar entries listed"
        )
        first = cards[0]
        assert "library" in first.find_element(By.TAG_NAME, "h2").text
        assert "duplicate" in first.find_element(By.CSS_SELECTOR, ".badge").text
        marks = first.find_elements(By.TAG_NAME, "mark")
        assert len(marks) >= 4 and sum(len(m.text) for m in marks) > 0.6 * len(copy)
        summary = browser.find_element(By.CSS_SELECTOR, "#results .summary").text
        assert "copy of library" in summary
        assert browser.find_element(By.ID, "add-anyway").is_displayed()
        assert not browser.find_element(By.ID, "add").is_displayed()

        shot = tmp_path / "similar.png"
        browser.save_screenshot(str(shot))
        _assert_marked_screenshot(shot)
        keep = os.environ.get("NEARDUP_SCREENSHOT_DIR")
        if keep:
            shutil.copy(shot, os.path.join(keep, "serve-page.png"))

        browser.find_element(By.ID, "cancel").click()
        wait_for(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, "#results .entry"), "the list cleared")
        assert browser.find_element(By.ID, "text").get_attribute("value") == ""
        assert "nothing was added" in browser.find_element(By.ID, "status").text
        assert service.entry("library-copy").status == 404

        new = text("reservoir")
        browser.find_element(By.ID, "key").send_keys("reservoir")
        browser.find_element(By.ID, "text").send_keys(new)
        wait_for(
            browser,
            lambda d: "No similar entry" in d.find_element(By.CSS_SELECTOR, "#results .summary").text,
            "no similar entry for a new one",
        )
        add = browser.find_element(By.ID, "add")
        wait_for(browser, lambda d: add.is_enabled(), "the Add button enabled")
        add.click()
        wait_for(browser, lambda d: "added as reservoir" in d.find_element(By.ID, "status").text, "added")
        wait_for(browser, lambda d: "4 entries" in d.find_element(By.ID, "stats").text, "the count updated")
        stored = service.entry("reservoir")
        assert stored.status == 200 and stored.body["text"] == new

        browser.find_element(By.ID, "key").send_keys("library-kept")
        browser.find_element(By.ID, "text").send_keys(copy)
        wait_for(browser, lambda d: d.find_element(By.ID, "add-anyway").is_displayed(), "add anyway offered")
        browser.find_element(By.ID, "add-anyway").click()
        wait_for(
            browser, lambda d: "added anyway as library-kept" in d.find_element(By.ID, "status").text, "added anyway"
        )
        assert service.entry("library-kept").status == 200
        errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
        assert errors == [], errors  # no script error, no refused resource (CSP)
    finally:
        assert service.stop() == 0


def _assert_marked_screenshot(path) -> None:
    from PIL import Image

    image = Image.open(path).convert("RGB")
    counts = {colour: n for n, colour in image.getcolors(image.size[0] * image.size[1])}
    marked = counts.get(MARK_COLOUR, 0)
    assert marked > 20_000, f"only {marked} pixels of the mark colour: are the shared passages marked?"
    dark = sum(n for colour, n in counts.items() if max(colour) < 100)
    assert dark > 20_000, "little dark text drawn: were the Chinese characters rendered?"
