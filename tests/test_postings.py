"""The posting-array BM25 gives exactly FTS5's answers (starter/index/postings.py).

Every free-text turn asks an OR query of up to 40 words; the arrays must give
the SQL query's list float for float (order, scores, ties by rowid), or hand
the query back to SQL.  Each test compares the two engines on the same index.
"""
from __future__ import annotations

import dataclasses
import heapq
import random
from pathlib import Path

import numpy as np
import pytest

from grounding.words import FILLER, tokens
from starter.index.catalog import CatalogIndex
from starter.settings import SETTINGS
from starter.index.cache import IndexCache
from tests.conftest import CATS_TEES, product, write_rows

WEIGHTS = {"docs": SETTINGS.index.bm25_weights, "full": SETTINGS.index.people_field_weights}


def both(ix: CatalogIndex, table: str, words: list[str], limit: int,
         weights: tuple[float, ...] | None = None) -> tuple[list, list | None]:
    """(the SQL query's answer, the arrays' answer or None)."""
    weights = weights or WEIGHTS[table]
    ix.postings.enabled = False
    sql = ix._match(table, weights, words, limit)
    ix.postings.enabled = True
    return sql, ix.postings.match(table, weights, words, limit)


def tie_catalog(tmp_path: Path) -> Path:
    """Identical rows (ties broken by rowid), a decimal that FTS5 reads as two tokens, a stem pair."""
    rows = [product(f"P{k}", "Cotton tee black", ["100% Cotton", "Imported"], CATS_TEES, 10) for k in range(6)]
    rows += [product("H1", "Heel 3.5 inch pumps", ["Heel height 3.5 inches"], CATS_TEES, 5),
             product("H2", "Heel 3 inch pumps 5 pack", ["Strap count 5", "Heel 3 wide"], CATS_TEES, 5),
             product("D1", "Summer dresses floral dress", ["Dress length midi"], CATS_TEES, 5)]
    path = tmp_path / "ties.jsonl"
    write_rows(path, rows)
    return path


@pytest.mark.parametrize("table", ["docs", "full"])
def test_ties_phrases_and_stems_equal_the_sql_query(tmp_path: Path, table: str) -> None:
    ix = CatalogIndex(tie_catalog(tmp_path), SETTINGS.index, None)
    for words in (["cotton"], ["black", "cotton", "tee"], ["3.5"], ["3.5", "heel"], ["3", "5"], ["dress", "dresses"],
                  ["floral", "nothingmatchesthis"], ["nothingmatchesthis"]):
        for limit in (1, 3, 5, 50):
            sql, arrays = both(ix, table, words, limit)
            assert arrays == sql, (words, limit)
    # The phrase "3.5" is the two tokens at consecutive positions: H1 only, not H2's "3" ... "5".
    assert [i for i, _ in both(ix, table, ["3.5"], 10)[1]] == [ix.by_pid["H1"]]
    assert [i for i, _ in both(ix, table, ["cotton"], 3)[1]] == [ix.by_pid[f"P{k}"] for k in range(3)]


def test_weights_whose_sums_are_not_exact_go_to_sql(small_catalog: Path) -> None:
    ix = CatalogIndex(small_catalog, SETTINGS.index, None)
    sql, arrays = both(ix, "docs", ["cotton", "black"], 5, weights=(0.1, 0.2, 0.3))
    assert arrays is None and sql
    assert ix._match("docs", (0.1, 0.2, 0.3), ["cotton", "black"], 5) == sql


def test_the_sqlite_engine_setting_turns_the_arrays_off(small_catalog: Path) -> None:
    ix = CatalogIndex(small_catalog, dataclasses.replace(SETTINGS.index, bm25_engine="sqlite"), None)
    assert not ix.postings.enabled and ix.bm25(["cotton"], 5)


def test_the_posting_memo_stays_within_its_bound(small_catalog: Path) -> None:
    ix = CatalogIndex(small_catalog, dataclasses.replace(SETTINGS.index, posting_cache_entries=6), None)
    words = ["cotton", "tee", "black", "leather", "boot", "imported", "chelsea"]
    first = [ix.fulltext([w], 10) for w in words]
    assert ix.postings.held <= 6 or len(ix.postings._postings) == 1
    assert [ix.fulltext([w], 10) for w in words] == first
    ix.postings.enabled = False
    assert [ix.fulltext([w], 10) for w in words] == first


def test_a_read_only_cached_index_is_scored_by_the_arrays(small_catalog: Path, tmp_path: Path) -> None:
    cache = IndexCache(tmp_path / "c")
    CatalogIndex(small_catalog, SETTINGS.index, cache)
    ix = CatalogIndex(small_catalog, SETTINGS.index, cache)
    assert ix.cache_state == "loaded"
    sql, arrays = both(ix, "full", ["leather", "boot", "brown"], 5)
    assert arrays is not None and arrays == sql


def test_random_queries_on_the_proxy_catalog_equal_the_sql_query(proxy_agent) -> None:
    """Word salads of 1-40 words drawn from titles and card values (decimals, sizes, brands)."""
    ix = proxy_agent.index
    budget, ix.postings.load_share = ix.postings.load_share, 10.0 ** 9     # read every phrase (compare all)
    rng = random.Random(3)
    vocab = sorted({t for p in ix.products[:400] for t in tokens(p.title + " " + " ".join(p.constraints))
                    if t not in FILLER})
    for _ in range(60):
        words = [rng.choice(vocab) for _ in range(rng.choice([1, 2, 4, 8, 20, 40]))]
        for table, limit in (("docs", 200), ("full", 300)):
            query = ix._informative(table, words, 40)
            sql, arrays = both(ix, table, query, limit)
            assert arrays == sql, query
    ix.postings.load_share = budget


def shortlist_loop(clues, q, qmass: float) -> list[tuple[int, float]]:
    """The clue shortlist as a dict loop and heapq.nlargest (what grounding.clues computed before the
    arrays): each clue's weights added in the order of the sorted query words, key F1 of the masses,
    ties to the lower clue position."""
    acc: dict[int, float] = {}
    for v in sorted(q.weights):
        for c in clues.postings.get(v, ()):
            acc[c] = acc.get(c, 0.0) + q.weights[v]
    cm = clues.clue_mass
    return heapq.nlargest(clues.cfg.shortlist, acc.items(), key=lambda kv: (2.0 * kv[1] / (cm[kv[0]] + qmass), -kv[0]))


def test_the_clue_shortlist_from_arrays_equals_the_dict_loop(proxy_agent) -> None:
    """grounding.clues: the arrays' shortlist (clue, shared weight) is the loop's, in the same order."""
    clues = proxy_agent.gate.clues
    rng = random.Random(4)
    vocab = sorted(clues.postings)
    texts = ["black leather ankle boots for women", "cotton", "footed fleece pajamas with yetis big boys",
             "polyster tshirt"]
    texts += [" ".join(rng.choice(vocab) for _ in range(rng.choice([1, 3, 8, 30]))) for _ in range(80)]
    for text in texts:
        q = clues.prepare(text)
        if q.weights:
            qmass = q.mass or 1.0
            assert clues._shortlist(q, qmass) == shortlist_loop(clues, q, qmass), text


def test_row_lengths_decode_sqlite_varints() -> None:
    """FTS5's docsize record is one SQLite varint per column: 7 bits a byte, most significant first."""
    from starter.index.postings import _varint_sums

    def varint(v: int) -> bytes:
        out = [v & 0x7F]
        v >>= 7
        while v:
            out.append(0x80 | (v & 0x7F))
            v >>= 7
        return bytes(reversed(out))

    rng = random.Random(1)
    rows = [[rng.choice([0, 1, 127, 128, 300, 16383, 16384, 70000, 2 ** 30]) for _ in range(rng.randrange(1, 7))]
            for _ in range(500)]
    assert list(_varint_sums([b"".join(map(varint, r)) for r in rows])) == [sum(r) for r in rows]


def test_stored_term_counts_answer_a_cold_query_at_once_and_equal_fts5vocab(small_catalog: Path) -> None:
    """The build's stored counts cost no load budget: the first query is the arrays', SQL's floats."""
    from starter.index.term_counts import read_term_counts
    ix = CatalogIndex(small_catalog, dataclasses.replace(SETTINGS.index, posting_load_share=5 / 8), None)   # 8 products
    words = ["cotton", "tee", "imported", "3.5"]
    sql, arrays = both(ix, "full", words, 5)
    assert arrays is not None and arrays == sql
    stored = ix.postings._instances("full", ("cotton",))
    assert len(read_term_counts(ix.db, "full", "cotton")[0]) > 0
    ix.postings._stored = False                       # the same phrase through fts5vocab
    read = ix.postings._instances("full", ("cotton",))
    assert all(np.array_equal(a, b) for a, b in zip(stored, read))
    assert ix.postings._instances("full", ("nosuchterm",)) is None


def test_a_cold_query_past_the_load_budget_goes_to_sql_and_warms_the_arrays(small_catalog: Path) -> None:
    """Without stored term counts (an index built by older code): rows held: cotton 4, tee 5,
    imported 4; a budget of 5 rows a query reads one word a turn."""
    ix = CatalogIndex(small_catalog, dataclasses.replace(SETTINGS.index, posting_load_share=5 / 8), None)   # 8 products
    ix.db.execute("DROP TABLE term_counts")
    words = ["cotton", "tee", "imported"]
    held = []
    for _ in range(3):
        sql, arrays = both(ix, "full", words, 5)
        held.append(len(ix.postings._postings))
        if arrays is not None:
            break
    assert held == [1, 2, 3] and arrays == sql


def test_an_index_the_arrays_cannot_read_turns_them_off_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    import sqlite3

    from starter.index.fts_tables import FTS_COLUMNS, FTS_TOKENIZERS
    from starter.index.postings import PostingScorer
    scorer = PostingScorer(sqlite3.connect(":memory:"), FTS_COLUMNS, FTS_TOKENIZERS, lambda table, word: 1,
                           100, 100, 100)
    with caplog.at_level("WARNING"):
        assert scorer.match("full", WEIGHTS["full"], ["cotton"], 5) is None
        assert scorer.match("full", WEIGHTS["full"], ["cotton"], 5) is None
    assert not scorer.enabled and len([r for r in caplog.records if "array BM25" in r.getMessage()]) == 1


def test_best_first_keeps_the_ties_at_the_cut_and_orders_them_by_id() -> None:
    """grounding.topk: the n best by (score descending, id ascending), as a full sort would give."""
    import numpy as np

    from grounding.topk import best_first
    rng = random.Random(6)
    for n in (0, 1, 3, 10, 50):
        ids = np.array(rng.sample(range(1000), 40))
        scores = np.array([rng.choice([0.5, 1.0, 1.5, 2.0]) for _ in ids])
        want = sorted(range(len(ids)), key=lambda k: (-scores[k], ids[k]))[:n]
        assert list(best_first(ids, scores, n)) == want


@pytest.mark.parametrize("cached", [False, True])
def test_the_built_index_stores_the_row_lengths_bm25_reads(small_catalog: Path, tmp_path: Path, cached: bool) -> None:
    """The build stores each FTS5 table's row lengths, row count and mean (`store_row_lengths`): the
    same arrays and floats as reading FTS5's docsize table, in a built, a loaded and an in-memory index."""
    from starter.index.postings import read_row_lengths, row_lengths
    cache = IndexCache(tmp_path / "c") if cached else None
    indexes = [CatalogIndex(small_catalog, SETTINGS.index, cache)]
    if cached:
        indexes.append(CatalogIndex(small_catalog, SETTINGS.index, cache))
        assert indexes[-1].cache_state == "loaded"
    for ix in indexes:
        for table in ("docs", "full"):
            stored, fresh = read_row_lengths(ix.db, table), row_lengths(ix.db, table)
            assert stored is not None and stored[0].tolist() == fresh[0].tolist() and stored[0].sum() > 0
            assert stored[1:] == fresh[1:] and stored[1] == len(ix.products)
            assert ix.postings.row_lengths(table)[2] == fresh[2]
    import sqlite3
    assert read_row_lengths(sqlite3.connect(":memory:"), "docs") is None      # an index without them: worked out


def test_row_lengths_read_in_chunks_equal_one_read(small_catalog: Path) -> None:
    from starter.index import postings as P
    ix = CatalogIndex(small_catalog, SETTINGS.index)
    for table in ("docs", "full"):
        whole = P._length_parts(ix.db, table, chunk=10 ** 9)
        for chunk in (1, 2, 3, 7):
            got = P._length_parts(ix.db, table, chunk=chunk)
            assert got[0].tolist() == whole[0].tolist() and got[1:] == whole[1:] and whole[1] == len(ix.products)


def test_both_posting_caches_evict_the_least_recently_used_first() -> None:
    from collections import OrderedDict

    import numpy as np

    from starter.index.postings import evicted

    cache = OrderedDict((k, (np.zeros(n), None)) for k, n in (("a", 3), ("b", 2), ("c", 4)))
    assert evicted(cache, 9, 6) == 6 and list(cache) == ["b", "c"]
    assert evicted(cache, 6, 1) == 4 and list(cache) == ["c"]          # the newest entry always stays


def test_the_share_of_words_held_equals_the_sql_answer_and_counts_each_word(proxy_agent) -> None:
    """`fulltext_coverage` from the arrays equals the word-by-word SQL answer on the proxy catalog, and
    is the share of the query's words each product holds (a product holding every word has 1.0)."""
    import numpy as np

    from starter.people.pool import ALL_FIELDS, TYPE_FIELDS

    ix = proxy_agent.index
    words = ["waterproof", "slip", "ons", "husband", "rubber", "sole"]
    arrays = ix.fulltext_coverage(words, [ALL_FIELDS, TYPE_FIELDS])
    ix.postings.enabled = False
    try:
        sql = ix.fulltext_coverage(words, [ALL_FIELDS, TYPE_FIELDS])
    finally:
        ix.postings.enabled = True
    assert all(np.array_equal(a, s) for a, s in zip(arrays, sql))
    query = ix._informative("full", words, 40)
    assert set(np.unique(arrays[0]).tolist()) <= {k / len(query) for k in range(len(query) + 1)}
    assert (arrays[1] <= arrays[0]).all()             # title and categories are some of all fields
    one = ix.fulltext_scores([query[0]], [ALL_FIELDS])[0]
    assert np.array_equal(one > 0, ix.fulltext_coverage([query[0]], [ALL_FIELDS])[0] > 0)


def test_a_query_that_extends_a_remembered_one_gives_the_same_floats(proxy_agent) -> None:
    """The people model's cumulative queries (BM25 and words held) start from the last sum they extend:
    every float equals a fresh sum's (no memo), for queries that grow, shrink, and change a word."""
    import numpy as np

    from starter.index.field_scores import FieldScorer
    from starter.people.pool import ALL_FIELDS, DETAIL_FIELDS, TYPE_FIELDS

    ix = proxy_agent.index
    groups = [ALL_FIELDS, TYPE_FIELDS, DETAIL_FIELDS]
    memo, fresh = FieldScorer(ix.postings, 4), FieldScorer(ix.postings, 0)
    queries = [["waterproof"], ["waterproof", "slip", "ons"], ["waterproof", "slip", "ons", "rubber", "sole"],
               ["waterproof", "slip"], ["waterproof", "slip", "canvas"], ["leather", "tote"],
               ["waterproof", "slip", "ons", "rubber", "sole", "light"]]
    for words in queries:
        got, want = memo.scores("full", groups, words), fresh.scores("full", groups, words)
        assert all(np.array_equal(g, w) for g, w in zip(got, want)), words
        got, want = memo.coverage("full", groups, words), fresh.coverage("full", groups, words)
        assert all(np.array_equal(g, w) for g, w in zip(got, want)), words
    again = memo.scores("full", groups, queries[-1])              # a remembered query: its own arrays,
    with pytest.raises(ValueError):                               # which no caller can change
        again[0][0] = 1.0
        got[0][:] = -1.0                              # a caller's change never reaches the memo
    assert len(memo._sums) == 4 and not fresh._sums
    again = memo.scores("full", groups, queries[-1])
    assert all(np.array_equal(g, w) for g, w in zip(again, fresh.scores("full", groups, queries[-1])))
