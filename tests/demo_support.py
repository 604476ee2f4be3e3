"""A tiny hand-made catalog and dataset for the demo tests, and a web server in a thread."""
from __future__ import annotations

import json
from pathlib import Path

XSS_TITLE = "<script>alert(1)</script> Fleece Jogger"
IMG_TITLE = "<img src=x onerror=alert(2)> Trail Sneaker"

_SHELVES = {
    "pants": ["Clothing, Shoes & Jewelry", "Men", "Clothing", "Active", "Active Pants", "Sweatpants"],
    "shoes": ["Clothing, Shoes & Jewelry", "Women", "Shoes", "Fashion Sneakers", "Running Sneakers"],
    "jewelry": ["Clothing, Shoes & Jewelry", "Women", "Jewelry", "Necklaces", "Pendant Necklaces"],
}
_MATERIALS = ["cotton", "polyester", "nylon", "leather", "wool", "silk", "rayon", "spandex"]
_COLORS = ["black", "white", "blue", "red", "pink", "green", "brown", "gray"]


def _product(shelf: str, k: int, title: str, rating_number: int) -> dict:
    m, c = _MATERIALS[k % 8], _COLORS[(k * 3) % 8]
    return {
        "parent_asin": f"T{shelf[:2].upper()}{k:04d}",
        "title": title,
        "features": [f"{m.title()} blend shell", f"Colour {c}", f"Design number {shelf}-{k}",
                     f"Pocket count {k % 4}", "Machine wash"],
        "description": [f"A {c} {m} item from the tiny test shelf {shelf}."],
        "price": round(10 + 3.5 * k, 2) if k % 5 else None,
        "categories": _SHELVES[shelf],
        "details": {"Department": "Unisex", "Item model number": f"{shelf}-{k:03d}"},
        "average_rating": round(3.5 + (k % 4) * 0.4, 1),
        "rating_number": rating_number,
        "store": f"Store {k % 3}",
    }


def write_catalog(dir_path: Path) -> tuple[Path, Path, dict]:
    """(catalog path, dataset path, facts) of a 24-product catalog and a 3-session dataset."""
    rows = []
    for shelf in _SHELVES:
        for k in range(8):
            title = f"Tiny {shelf} item {k}"
            rating = 100 * (8 - k)
            if shelf == "pants" and k == 0:
                title, rating = XSS_TITLE, 5000          # the most popular: shown on turn 1
            if shelf == "shoes" and k == 1:
                title, rating = IMG_TITLE, 4000
            rows.append(_product(shelf, k, title, rating))
    catalog = dir_path / "tiny_catalog.jsonl"
    catalog.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    sessions = [
        {"sample_id": "tiny_0001", "scenario_type": "buying", "ground_truth": {"parent_asin": "TSH0005"},
         "user_profile": {}},
        {"sample_id": "tiny_0002", "scenario_type": "browsing", "ground_truth": {"parent_asin": "TPA0003"},
         "user_profile": {}},
        {"sample_id": "tiny_0003", "scenario_type": "intent_override", "ground_truth": {"parent_asin": "TJE0006"},
         "user_profile": {}},
    ]
    dataset = dir_path / "tiny_sessions.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in sessions), encoding="utf-8")
    return catalog, dataset, {"xss_pid": "TPA0000", "img_pid": "TSH0001", "rows": rows}


def start_web(catalog: Path, datasets: dict[str, Path]):
    """(server, base url) of demo.web (uvicorn in a thread) on a free loopback port; `server.stop()` ends it."""
    from demo.session import ProductLookup, build_agent
    from demo.web import DemoApp
    from demo.web_server import BackgroundServer

    lookup = ProductLookup(catalog)
    app = DemoApp(build_agent(catalog), lookup, dict(datasets), str(catalog))
    server = BackgroundServer.for_demo(app)
    return server, server.url


def evaluator_record(catalog: Path, dataset: Path, sample_id: str, modes: frozenset = frozenset()) -> dict:
    """What evaluator.local_evaluator records for one session (its own code path, a fresh agent)."""
    from evaluator.data import load_catalog_view, read_jsonl
    from evaluator.local_evaluator import run_session
    from starter.agent import Agent

    rows = [r for r in read_jsonl(dataset) if r["sample_id"] == sample_id]
    view = load_catalog_view(catalog, {rows[0]["ground_truth"]["parent_asin"]})
    return run_session(Agent(str(catalog)), rows[0], 0, view, modes, 0.35, transcripts=True)
