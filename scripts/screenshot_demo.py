"""Screenshot of the web demo mid-conversation (for the README).

    python -m scripts.screenshot_demo [--catalog PATH] [--out evaluation_results/demo_web_full.png]
        [--message TEXT ...]

Starts demo.web in-process on a free loopback port, drives headless Chromium
(Debian's chromium + chromium-driver, via Selenium) through the messages,
and saves a PNG of the page with the last turn's decisions in the side panel.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from demo.browser import find_chromium, make_driver
from demo.session import ProductLookup, build_agent, dataset_paths
from demo.web import DemoApp
from demo.web_server import BackgroundServer
from evaluator.data import resolve_catalog

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MESSAGES = [
    "I'm looking for Active Pants Sweatpants, but I'm still exploring.",
    "For that, what matters is: cotton; 60% Cotton, 40% Polyester.",
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.screenshot_demo", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--catalog", help="catalog JSONL (default: as the evaluator resolves it)")
    ap.add_argument("--out", default=str(ROOT / "evaluation_results" / "demo_web_full.png"))
    ap.add_argument("--message", action="append", help="a shopper message (repeatable; default: two turns)")
    ap.add_argument("--width", type=int, default=1440)
    ap.add_argument("--height", type=int, default=960)
    args = ap.parse_args(argv)
    found = find_chromium()
    if isinstance(found, str):
        print(f"error: {found}", file=sys.stderr)
        return 2
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    catalog = resolve_catalog(args.catalog)
    t0 = time.perf_counter()
    lookup = ProductLookup(catalog)
    app = DemoApp(build_agent(catalog), lookup, dataset_paths(), str(catalog))
    server = BackgroundServer.for_demo(app)
    url = server.url + "/"
    print(f"serving {url} ({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
    messages = args.message or DEFAULT_MESSAGES
    with tempfile.TemporaryDirectory() as profile:
        driver = make_driver(profile, args.width, args.height)
        try:
            wait = WebDriverWait(driver, 60)
            driver.get(url)
            wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
            box = driver.find_element(By.ID, "chat-input")
            for n, text in enumerate(messages, 1):
                box.send_keys(text)
                driver.find_element(By.ID, "chat-send").click()
                wait.until(lambda d, n=n: len(d.find_elements(By.CSS_SELECTOR, "#chat-log .msg.agent")) == n)
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(args.out)
        finally:
            driver.quit()
            server.stop()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
