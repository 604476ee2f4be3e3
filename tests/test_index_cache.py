"""The on-disk index cache: a hit gives the same index as a build; anything odd is rebuilt."""
from __future__ import annotations

import dataclasses
import json
import logging
import os
from pathlib import Path

import pytest

from starter.index.catalog import CatalogIndex
from starter.settings import SETTINGS
from starter.index.cache import IndexCache, default_cache_dir
from tests.conftest import SMALL_PRODUCTS, write_rows


def _snapshot(ix: CatalogIndex) -> dict:
    """Everything the agent reads from an index, for comparison."""
    return {
        "products": ix.products, "by_pid": ix.by_pid, "shelves": ix.shelves, "shelf_sizes": ix.shelf_sizes,
        "clues": ix.clues, "clue_postings": ix.clue_postings(), "clue_list": ix.clue_list(), "idf": ix.idf, "default_idf": ix.default_idf,
        "popular": ix.popular, "log_prior": ix.log_prior,
        "bm25": ix.bm25(["cotton", "tee", "black", "boot"], 10),
        "bm25_shelf": ix.bm25(["leather"], 5, shelf=ix.products[0].shelf),
        "fulltext": ix.fulltext(["boots", "waterproof", "cottons"], 10),
        "cards": {name: getattr(ix.cards, name).tolist() for name in ("values", "twins", "pattern", "shelf", "word_idf")},
        "value_words": (ix.cards.words.vocabulary, ix.cards.words.offsets.tolist(), ix.cards.words.ids.tolist()),
        "plan": ix.cards._plan.tolist(),
    }


def _files(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


def test_second_build_loads_the_same_index(small_catalog: Path, tmp_path: Path) -> None:
    cache = IndexCache(tmp_path / "c")
    first = CatalogIndex(small_catalog, SETTINGS.index, cache)
    second = CatalogIndex(small_catalog, SETTINGS.index, cache)
    plain = CatalogIndex(small_catalog, SETTINGS.index, None)
    assert (first.cache_state, second.cache_state, plain.cache_state) == ("built", "loaded", "memory")
    assert _snapshot(first) == _snapshot(second) == _snapshot(plain)
    assert len([n for n in _files(tmp_path / "c") if n.endswith(".sqlite")]) == 1


def test_proxy_catalog_hit_equals_build(proxy_catalog: Path, tmp_path: Path) -> None:
    cache = IndexCache(tmp_path / "c")
    built = CatalogIndex(proxy_catalog, SETTINGS.index, cache)
    loaded = CatalogIndex(proxy_catalog, SETTINGS.index, cache)
    assert (built.cache_state, loaded.cache_state) == ("built", "loaded")
    assert _snapshot(built) == _snapshot(loaded)


def test_catalog_edited_in_place_is_rebuilt_and_old_entry_dropped(small_catalog: Path, tmp_path: Path) -> None:
    cache = IndexCache(tmp_path / "c")
    CatalogIndex(small_catalog, SETTINGS.index, cache)
    before = _files(tmp_path / "c")
    rows = [dict(p) for p in SMALL_PRODUCTS]
    rows[0]["title"] = "Plain cotton tee crimson"
    write_rows(small_catalog, rows)
    again = CatalogIndex(small_catalog, SETTINGS.index, cache)
    assert again.cache_state == "built"
    assert again.products[0].title == "Plain cotton tee crimson"
    after = _files(tmp_path / "c")
    assert len(after) == 2 and set(after).isdisjoint(before)   # the stale pair is gone


def _hashes_seen(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(file name, thread name) of every SHA-256 the index code computes from now on."""
    import threading
    from starter.index import catalog as CATALOG
    from starter.index import cache as CACHE
    seen: list[tuple[str, str]] = []
    real = CACHE.file_sha256

    def spy(path: Path, *args) -> str:
        seen.append((Path(path).name, threading.current_thread().name))
        return real(path, *args)
    monkeypatch.setattr(CACHE, "file_sha256", spy)
    monkeypatch.setattr(CATALOG, "file_sha256", spy)
    return seen


def test_an_unchanged_catalog_is_hashed_beside_the_load(small_catalog: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    cache = IndexCache(tmp_path / "c")
    built = CatalogIndex(small_catalog, SETTINGS.index, cache)
    assert cache.guess(small_catalog, SETTINGS.index) == cache.key(small_catalog, SETTINGS.index)
    seen = _hashes_seen(monkeypatch)
    loaded = CatalogIndex(small_catalog, SETTINGS.index, cache)
    assert loaded.cache_state == "loaded" and _snapshot(loaded) == _snapshot(built)
    catalog_hashes = [thread for name, thread in seen if name == small_catalog.name]
    assert len(catalog_hashes) == 1 and catalog_hashes[0].startswith("catalog-hash")


def test_a_catalog_rewritten_with_its_old_size_and_time_is_caught_by_its_hash(
        small_catalog: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cache = IndexCache(tmp_path / "c")
    CatalogIndex(small_catalog, SETTINGS.index, cache)
    st = small_catalog.stat()
    text = small_catalog.read_text(encoding="utf-8")
    edited = text.replace("Plain cotton tee", "Plain cotton tea", 1)
    assert edited != text and len(edited.encode()) == len(text.encode())
    with open(small_catalog, "r+", encoding="utf-8") as fh:        # in place: the same inode
        fh.write(edited)
    os.utime(small_catalog, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert cache.guess(small_catalog, SETTINGS.index) is not None          # size, time and inode say unchanged
    with caplog.at_level(logging.WARNING):
        again = CatalogIndex(small_catalog, SETTINGS.index, cache)
    assert again.cache_state == "built" and again.products[0].title.startswith("Plain cotton tea")
    assert "changed though its size and modification time did not" in caplog.text
    assert CatalogIndex(small_catalog, SETTINGS.index, cache).cache_state == "loaded"


def test_no_guess_without_a_matching_manifest(small_catalog: Path, tmp_path: Path) -> None:
    cache = IndexCache(tmp_path / "c")
    assert cache.guess(small_catalog, SETTINGS.index) is None                # nothing stored yet
    CatalogIndex(small_catalog, SETTINGS.index, cache)
    other = dataclasses.replace(SETTINGS.index, max_field_chars=SETTINGS.index.max_field_chars - 1)
    assert cache.guess(small_catalog, other) is None                   # other index tunables
    st = small_catalog.stat()
    os.utime(small_catalog, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))   # touched: a newer time
    assert cache.guess(small_catalog, SETTINGS.index) is None
    assert CatalogIndex(small_catalog, SETTINGS.index, cache).cache_state == "loaded"   # found by its hash,
    assert cache.guess(small_catalog, SETTINGS.index) == cache.key(small_catalog, SETTINGS.index)   # and restamped


@pytest.mark.parametrize("damage", ["truncate", "flip", "manifest_garbage", "manifest_other_key", "no_db"])
def test_damaged_cache_is_never_trusted(small_catalog: Path, tmp_path: Path, damage: str,
                                        caplog: pytest.LogCaptureFixture) -> None:
    cache = IndexCache(tmp_path / "c")
    good = _snapshot(CatalogIndex(small_catalog, SETTINGS.index, cache))
    db_path, manifest_path = cache.paths(cache.key(small_catalog, SETTINGS.index))
    data = db_path.read_bytes()
    if damage == "truncate":
        db_path.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        db_path.write_bytes(data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:])
    elif damage == "manifest_garbage":
        manifest_path.write_text("{not json", encoding="utf-8")
    elif damage == "manifest_other_key":
        m = json.loads(manifest_path.read_text(encoding="utf-8"))
        m["key"]["catalog_sha256"] = "0" * 64
        manifest_path.write_text(json.dumps(m), encoding="utf-8")
    else:
        db_path.unlink()
    with caplog.at_level(logging.WARNING, logger="starter.index.cache"):
        again = CatalogIndex(small_catalog, SETTINGS.index, cache)
    assert again.cache_state == "built"
    assert "rebuilding" in caplog.text
    assert _snapshot(again) == good
    assert CatalogIndex(small_catalog, SETTINGS.index, cache).cache_state == "loaded"   # the entry was repaired


def test_index_tunables_and_code_are_part_of_the_key(small_catalog: Path, tmp_path: Path) -> None:
    from dataclasses import replace

    cache = IndexCache(tmp_path / "c")
    base = cache.key(small_catalog, SETTINGS.index)
    assert cache.key(small_catalog, replace(SETTINGS.index, max_field_chars=500)).digest != base.digest
    assert cache.key(small_catalog, replace(SETTINGS.index, prior_alpha=0.9)).digest == base.digest  # read at load
    assert replace(base, code="x" * 64).digest != base.digest
    assert replace(base, format=base.format + 1).digest != base.digest


def test_environment_chooses_or_disables_the_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENT_INDEX_CACHE", "off")
    assert default_cache_dir() is None and IndexCache.from_env() is None
    monkeypatch.setenv("AGENT_INDEX_CACHE", str(tmp_path / "x"))
    assert default_cache_dir() == tmp_path / "x"
    monkeypatch.delenv("AGENT_INDEX_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "techjam-shopper" / "index"


def test_agent_with_cache_off_writes_nothing(small_catalog: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from starter.agent import Agent

    monkeypatch.setenv("AGENT_INDEX_CACHE", "off")
    agent = Agent(str(small_catalog))
    assert agent.index.cache_state == "memory"
    monkeypatch.setenv("AGENT_INDEX_CACHE", str(tmp_path / "c"))
    assert Agent(str(small_catalog)).index.cache_state == "built"
    assert Agent(str(small_catalog)).index.cache_state == "loaded"
    assert Agent(str(small_catalog), index_cache=False).index.cache_state == "memory"


def test_unwritable_cache_directory_builds_in_memory(small_catalog: Path, tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="starter.index.cache"):
        ix = CatalogIndex(small_catalog, SETTINGS.index, IndexCache(blocker / "sub"))
    assert ix.cache_state == "memory" and "not writable" in caplog.text
    assert ix.bm25(["cotton"], 3)


def test_warm_load_repeats_the_row_warnings(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "cat.jsonl"
    rows = [dict(p) for p in SMALL_PRODUCTS] + [{"title": "no id"}, dict(SMALL_PRODUCTS[0])]
    write_rows(path, rows)
    cache = IndexCache(tmp_path / "c")
    with caplog.at_level(logging.WARNING, logger="starter.index.catalog"):
        CatalogIndex(path, SETTINGS.index, cache)
        cold = caplog.text
        caplog.clear()
        assert CatalogIndex(path, SETTINGS.index, cache).cache_state == "loaded"
    assert "skipped 1 rows without a usable parent_asin" in cold and "1 rows with a duplicate" in cold
    assert "skipped 1 rows without a usable parent_asin" in caplog.text


def test_no_cache_flag_turns_the_cache_off(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from contest.paths import add_no_cache_argument

    ap = argparse.ArgumentParser()
    add_no_cache_argument(ap)
    monkeypatch.setenv("AGENT_INDEX_CACHE", "/somewhere")
    assert ap.parse_args([]).no_cache is False and default_cache_dir() == Path("/somewhere")
    assert ap.parse_args(["--no-cache"]).no_cache is True
    assert default_cache_dir() is None


def test_entries_of_vanished_catalogs_are_dropped(small_catalog: Path, tmp_path: Path) -> None:
    cache = IndexCache(tmp_path / "c")
    gone = tmp_path / "gone.jsonl"
    gone.write_bytes(small_catalog.read_bytes() + b"\n")
    CatalogIndex(gone, SETTINGS.index, cache)
    kept = tmp_path / "kept.jsonl"
    kept.write_bytes(small_catalog.read_bytes() + b"\n\n")
    CatalogIndex(kept, SETTINGS.index, cache)
    assert len(_files(tmp_path / "c")) == 4                  # both still exist: both kept
    gone.unlink()
    CatalogIndex(small_catalog, SETTINGS.index, cache)
    names = _files(tmp_path / "c")
    assert len(names) == 4                                   # kept + small_catalog; gone's entry removed
    manifests = [json.loads((tmp_path / "c" / n).read_text(encoding="utf-8"))["catalog"]
                 for n in names if n.endswith(".json")]
    assert sorted(manifests) == sorted([str(kept.resolve()), str(small_catalog.resolve())])


def test_agent_lets_the_clue_words_go_after_its_gate(small_catalog: Path) -> None:
    from starter.agent import Agent

    agent = Agent(str(small_catalog))
    assert agent.gate.clues.clue_list and len(agent.index.clue_words) == 0
    with pytest.raises(LookupError, match="released"):
        agent.index.clue_words["100% Cotton"]
    assert agent.respond("s", "I'm looking for a cotton tee", 1, 10)["recommendations"]


def test_the_stored_clue_postings_are_what_the_clue_index_computes(small_catalog: Path, tmp_path: Path) -> None:
    """A loaded index hands the clue index its stored postings and masses (no card-value words are
    read at start); they equal what `clue_postings` computes from the words, float for float."""
    from types import SimpleNamespace
    from grounding.clues import ClueIndex
    from starter.settings import GROUNDING
    cache = IndexCache(tmp_path / "c")
    built = CatalogIndex(small_catalog, SETTINGS.index, cache)
    loaded = CatalogIndex(small_catalog, SETTINGS.index, cache)
    assert loaded.cache_state == "loaded" and len(loaded.clue_words) == 0
    plain = SimpleNamespace(clues=built.clues, clue_words=built.clue_words, shelf_sizes=built.shelf_sizes,
                            default_idf=built.default_idf, idf_of=built.idf_of)   # no clue_postings(): computed
    computed = ClueIndex(plain, frozenset(), GROUNDING)
    stored = ClueIndex(loaded, frozenset(), GROUNDING)
    assert computed.postings and computed.postings == stored.postings
    assert computed.clue_mass == stored.clue_mass and computed.clue_list == stored.clue_list


def test_every_module_that_writes_an_index_table_is_part_of_the_key() -> None:
    """A module that writes a table into the index file decides what a cache holds: a change to its
    code must give a new key (the conversation journal and the session store are no index tables)."""
    from starter.index.cache import index_code
    root = Path(__file__).resolve().parent.parent
    writers = {".".join(p.relative_to(root).with_suffix("").parts) for p in (root / "starter").rglob("*.py")
               if "CREATE TABLE" in p.read_text(encoding="utf-8") and not {"conversation", "session_store"} & set(p.parts)}
    assert writers and writers <= set(index_code()), sorted(writers - set(index_code()))


def test_the_key_follows_the_imports_of_the_index_package() -> None:
    """The rules the index replays (the contest's card derivation) are part of the key because the index
    package imports them, not because a list names them."""
    from starter.index.cache import index_code
    code = index_code()
    assert "contest.card" in code and "starter.index.catalog" in code
    assert not any(m.startswith(("starter.template", "starter.people", "starter.conversation")) for m in code)
