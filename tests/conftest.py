"""Shared fixtures: a tiny hand-made catalog and the shared benchmark files."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import tqdm

# No tqdm monitor thread in the test process: a cold build forks its helper processes only from a
# process with no other thread, and the tests that build into a cache check that it does.
tqdm.tqdm.monitor_interval = 0

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "techjam"
PROXY_CATALOG = SHARED / "catalog_proxy.jsonl"
PUBLIC_SET = SHARED / "public_set.jsonl"

CATS_TEES = ["Clothing, Shoes & Jewelry", "Women", "Clothing", "Tops, Tees & Blouses", "T-Shirts"]
CATS_BOOTS = ["Clothing, Shoes & Jewelry", "Men", "Shoes", "Boots", "Chelsea"]


def write_rows(path: Path, rows: list[dict], tail: str = "") -> Path:
    """A catalog (or any JSON-lines file) of `rows` at `path`, one object a line (then `tail` as written)."""
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n" + tail, encoding="utf-8")
    return path


def product(pid: str, title: str, features: list[str], categories: list[str], rating_number: int,
            price: float | None = 19.99, details: dict | None = None) -> dict:
    return {"parent_asin": pid, "title": title, "features": features, "description": [], "price": price,
            "categories": categories, "details": details or {}, "average_rating": 4.2,
            "rating_number": rating_number, "store": "Acme"}


SMALL_PRODUCTS = [
    product("T1", "Plain cotton tee black", ["100% Cotton", "Imported", "Pull On closure"], CATS_TEES, 900),
    product("T2", "Cotton tee white", ["100% Cotton", "Imported", "Machine Wash"], CATS_TEES, 500),
    product("T3", "Polyester sport tee blue", ["100% Polyester", "Quick dry", "Imported"], CATS_TEES, 300),
    product("T4", "Cotton tee black v-neck", ["100% Cotton", "Imported", "Hand Wash Only"], CATS_TEES, 50),
    product("T5", "Cotton tee black v-neck twin", ["100% Cotton", "Imported", "Hand Wash Only"], CATS_TEES, 40),
    product("B1", "Leather chelsea boot brown", ["Leather", "Rubber sole", "Pull-on"], CATS_BOOTS, 700, 89.0),
    product("B2", "Suede chelsea boot", ["Suede", "Rubber sole", "Elastic gore"], CATS_BOOTS, 200, 59.5),
    product("B3", "Waterproof leather boot black", ["Leather", "Waterproof", "Lace-up"], CATS_BOOTS, 100, None),
]


@pytest.fixture(scope="session", autouse=True)
def _index_cache_dir(tmp_path_factory: pytest.TempPathFactory):
    """Tests keep built indexes in a directory of their own, never the user's cache."""
    import os
    old = os.environ.get("AGENT_INDEX_CACHE")
    os.environ["AGENT_INDEX_CACHE"] = str(tmp_path_factory.mktemp("index-cache"))
    yield
    if old is None:
        os.environ.pop("AGENT_INDEX_CACHE", None)
    else:
        os.environ["AGENT_INDEX_CACHE"] = old


@pytest.fixture()
def small_catalog(tmp_path: Path) -> Path:
    path = tmp_path / "catalog.jsonl"
    write_rows(path, SMALL_PRODUCTS)
    return path


@pytest.fixture(scope="session")
def proxy_catalog() -> Path:
    if not PROXY_CATALOG.is_file():
        pytest.skip(f"shared proxy catalog not found at {PROXY_CATALOG}")
    return PROXY_CATALOG


@pytest.fixture(scope="session")
def proxy_agent(proxy_catalog: Path):
    from starter.agent import Agent
    return Agent(str(proxy_catalog))


@pytest.fixture()
def server():
    """A stand-in LLM server (Ollama + OpenAI-compatible API) with scripted replies."""
    from tests.fake_llm_server import FakeLLMServer
    fake = FakeLLMServer().start()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture(scope="session")
def pg_cluster():
    """A throwaway PostgreSQL server for the run (initdb into a temporary folder, stopped at the end)."""
    import os
    required = os.environ.get("TECHJAM_REQUIRE_POSTGRES") == "1"     # set by .ci/run once it is installed
    from scripts.pg_cluster import PgCluster
    try:
        import psycopg  # noqa: F401
        cluster = PgCluster()
    except (ImportError, FileNotFoundError) as exc:
        if required:
            pytest.fail(f"TECHJAM_REQUIRE_POSTGRES=1 but {exc}")
        pytest.skip(str(exc))
    try:
        yield cluster.start()
    finally:
        cluster.remove()


@pytest.fixture()
def pg_url(pg_cluster, request) -> str:
    """A fresh database on the run's PostgreSQL server, for one test."""
    import re
    import uuid
    name = re.sub(r"[^a-z0-9_]", "_", request.node.name.lower())[:40] + "_" + uuid.uuid4().hex[:6]
    return pg_cluster.create_database(name)
