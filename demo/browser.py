"""Headless Chromium for screenshots and the end-to-end test of the web demo.

Uses Debian's `chromium` and `chromium-driver` packages through Selenium; it
never downloads a browser or a driver (Selenium Manager is bypassed by giving
both paths).  `find_chromium()` says why it cannot run when something is missing.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars")


def find_chromium() -> tuple[str, str] | str:
    """(browser, driver) paths, or the reason they cannot be used."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium)"
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser:
        return "chromium is not installed (apt-get install -y chromium)"
    if not driver:
        return "chromedriver is not installed (apt-get install -y chromium-driver)"
    return browser, driver


def make_driver(user_data_dir: str | Path, width: int = 1400, height: int = 900) -> Any:
    """A headless Chromium WebDriver with a fresh profile; raises RuntimeError if unavailable."""
    found = find_chromium()
    if isinstance(found, str):
        raise RuntimeError(found)
    browser, driver_path = found
    os.environ.setdefault("SE_AVOID_STATS", "true")
    os.environ.setdefault("SE_OFFLINE", "true")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={user_data_dir}")
    opts.add_argument(f"--window-size={width},{height}")
    return webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
