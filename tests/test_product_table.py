"""Products stored as id arrays: what is read back, and what is derived from it, is what the
product list itself says."""
from __future__ import annotations

import hashlib
import logging
import sqlite3
from pathlib import Path

import pytest

from starter.index import catalog as catalog_module
from starter.index.catalog import CatalogIndex
from starter.settings import SETTINGS
from starter.index.cache import IndexCache, file_sha256
from starter.index.product_table import ClueLists, ClueWordCounter, Product, columns_of, load, places, shelf_lists, store


def _products() -> list[Product]:
    """Shared and repeated values, a value twice on one card, an empty card, ties in popularity."""
    rows = [("P3", "Tees", 5, ("Cotton", "Black", "Cotton"), ("material", "color", "material"), {"women"}),
            ("P1", "Boots", 9, ("Leather",), ("material",), set()),
            ("P2", "Tees", 5, ("Black", "Crew neck"), ("color", "style"), {"men", "women"}),
            ("P0", "Tees", 0, (), (), set()),
            ("P4", "Boots", 9, ("Black", "Leather"), ("color", "material"), {"women"})]
    return [Product(k, pid, f"title {pid}", shelf, None if k == 3 else 10.0 + k, rn, 4.5, cons, kinds,
                    frozenset(aud)) for k, (pid, shelf, rn, cons, kinds, aud) in enumerate(rows)]


def test_stored_products_read_back_equal_with_shared_parts() -> None:
    products = _products()
    cols = columns_of(products)
    db = sqlite3.connect(":memory:")
    store(db, products, cols)
    back, got = load(db)
    assert back == products
    assert got.values == ["Cotton", "Black", "Leather", "Crew neck"] and got.shelves == ["Tees", "Boots"]
    assert got.popular == cols.popular == [1, 4, 2, 0, 3]        # -rating_number, then parent_asin
    assert back[0].constraints[0] is back[0].constraints[2]       # one string object per card value
    assert back[0].constraints[1] is back[2].constraints[0] is back[4].constraints[0]
    assert back[0].types is not back[2].types and back[0].audience is back[4].audience


def test_shelves_places_and_clue_lists_are_what_the_products_say() -> None:
    products = _products()
    cols = columns_of(products)
    assert shelf_lists(cols) == {"Tees": [2, 0, 3], "Boots": [1, 4]}
    assert places(cols.popular) == [3, 0, 2, 4, 1]
    clues = ClueLists(cols)
    expected: dict[str, list[int]] = {}
    for p in products:
        for v in dict.fromkeys(p.constraints):
            expected.setdefault(v, []).append(p.idx)
    assert dict(clues) == expected and list(clues) == list(expected) and len(clues) == 4
    assert clues == expected                                       # Mapping equality, as the cache tests use
    assert clues["Black"] is clues.get("Black")                    # made once, then kept
    assert clues.get("Wool") is None and clues.get("Wool", ()) == () and "Wool" not in clues
    with pytest.raises(KeyError):
        clues["Wool"]


def test_the_checksum_reads_in_chunks_of_any_size(tmp_path: Path) -> None:
    data = bytes(range(256)) * 41 + b"tail"
    f = tmp_path / "blob"
    f.write_bytes(data)
    for chunk in (1, 7, 256, 1 << 20):
        assert file_sha256(f, chunk) == hashlib.sha256(data).hexdigest()


def test_a_load_failure_is_damage_only_when_the_checksum_says_so(small_catalog: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """The cached file is read while its checksum is verified: a read that fails on a damaged file is
    a rebuild; on a file whose checksum matches it is a fault, raised (never hidden by a rebuild)."""
    cache = IndexCache(tmp_path / "c")
    CatalogIndex(small_catalog, SETTINGS.index, cache)

    def broken(db: sqlite3.Connection) -> None:
        raise sqlite3.DatabaseError("malformed")
    monkeypatch.setattr(catalog_module, "load_products", broken)
    with pytest.raises(sqlite3.DatabaseError, match="malformed"):
        CatalogIndex(small_catalog, SETTINGS.index, cache)
    db_path, _ = cache.paths(cache.key(small_catalog, SETTINGS.index))
    data = db_path.read_bytes()
    db_path.write_bytes(data[:200] + bytes([data[200] ^ 0xFF]) + data[201:])
    with caplog.at_level(logging.WARNING, logger="starter.index.cache"):
        again = CatalogIndex(small_catalog, SETTINGS.index, cache)
    assert again.cache_state == "built" and "checksum does not match" in caplog.text
    monkeypatch.undo()
    assert CatalogIndex(small_catalog, SETTINGS.index, cache).cache_state == "loaded"


def test_no_collection_while_an_index_is_made_and_the_state_comes_back(small_catalog: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import gc
    seen: list[bool] = []
    real = catalog_module.CatalogIndex._derive

    def spy(self, *args) -> None:
        seen.append(gc.isenabled())
        real(self, *args)
    monkeypatch.setattr(catalog_module.CatalogIndex, "_derive", spy)
    assert gc.isenabled()
    CatalogIndex(small_catalog, SETTINGS.index)
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        CatalogIndex(small_catalog, SETTINGS.index)
        assert not gc.isenabled()          # a caller's own choice is left as it was
    finally:
        gc.enable()
    with pytest.raises(catalog_module.CatalogError):
        CatalogIndex(small_catalog.with_name("missing.jsonl"), SETTINGS.index)
    assert gc.isenabled()


def test_clue_words_and_their_frequencies_are_a_walk_over_every_card() -> None:
    """`ClueWordCounter` counts per distinct value: the same counts and the same first-seen order of values
    and words as a walk over every (product, distinct value, word) -- a word two values of one card
    share counts twice, as it always did."""
    products = _products() + [Product(5, "P5", "t", "Tees", 1.0, 1, 4.0, ("Black cotton", "Cotton"),
                                      ("color", "material"), frozenset())]
    counter = ClueWordCounter()
    for p in products:
        counter.add(p.constraints)
    clue_words, df = counter.finish()
    want_words: dict[str, tuple[str, ...]] = {}
    want_df: dict[str, int] = {}
    for p in products:
        for v in dict.fromkeys(p.constraints):
            words = want_words.setdefault(v, tuple(sorted(set(v.lower().split()))))
            for w in words:
                want_df[w] = want_df.get(w, 0) + 1
    assert clue_words == want_words and list(clue_words) == list(want_words)
    assert df == want_df and list(df) == list(want_df)
    assert df["cotton"] == 3 and df["black"] == 4
