"""The turn's memos stay out of the garbage collector's way and within their bounds.

A full collection walks every object it tracks, and every word of every set it
holds; memos that filled with frozensets (40,000 products' word sets, 42,000
IDF-weight keys, 30,000 texts' word sets) made each full collection 200-300 ms,
paid by whichever turn it fell in (bench_robustness fuzz).  The memos now keep
tuples of strings, which the collector stops tracking, and the one memo keyed by
sets is emptied when full.
"""
from __future__ import annotations

import dataclasses
import gc
from pathlib import Path

from starter.template import posterior as POSTERIOR
from starter.template import evidence as RANK
from starter.template import similarity as SIM
from starter.index.catalog import CatalogIndex
from starter.settings import SETTINGS


def test_memo_values_are_not_tracked_by_the_garbage_collector(small_catalog: Path) -> None:
    ix = CatalogIndex(small_catalog, SETTINGS.index, None)
    for i in range(len(ix.products)):
        ix.product_tokens(i)
    for p in ix.products:
        SIM.value_similarity(ix, p.constraints, frozenset({"cotton", "black"}))
    gc.collect()
    assert ix._product_tokens and not any(gc.is_tracked(v) for v in ix._product_tokens.values())
    texts = [v for p in ix.products for v in p.constraints]
    assert all(not gc.is_tracked(SIM._TOKSET_CACHE[t]) for t in texts if t in SIM._TOKSET_CACHE)


def test_product_tokens_hold_each_word_once_in_order(small_catalog: Path) -> None:
    ix = CatalogIndex(small_catalog, SETTINGS.index, None)
    t4 = ix.product_tokens(ix.by_pid["T4"])
    assert isinstance(t4, tuple) and len(t4) == len(set(t4))
    assert t4[:5] == ("cotton", "tee", "black", "v", "neck") and {"100", "imported"} <= set(t4)


def test_negation_and_coverage_read_the_word_tuples(small_catalog: Path) -> None:
    """said_coverage's IDF share and the negation test give what set algebra gives."""
    ix = CatalogIndex(small_catalog, SETTINGS.index, None)
    b1 = ix.by_pid["B1"]
    said = frozenset({"leather", "brown", "suede"})
    have = set(ix.product_tokens(b1))
    assert 0 < RANK.said_coverage(ix, b1, said) == ix.weight(frozenset(said & have)) / ix.weight(said) < 1
    assert RANK.said_coverage(ix, b1, frozenset({"suede"})) == 0.0


def test_weight_memo_is_emptied_when_full(small_catalog: Path) -> None:
    cfg = dataclasses.replace(SETTINGS.index, weight_memo_entries=3)
    ix = CatalogIndex(small_catalog, cfg, None)
    sets = [frozenset({w}) for w in ("cotton", "tee", "black", "leather", "boot")]
    first = [ix.weight(s) for s in sets]
    assert len(ix._weights) <= 3
    assert [ix.weight(s) for s in sets] == first == [ix.idf_of(next(iter(s))) for s in sets]


def test_constructing_the_agent_leaves_the_collector_alone_and_serving_freezes_it(small_catalog: Path) -> None:
    """The constructor has no interpreter-wide effect; the process that owns the interpreter opts in to
    `freeze_for_serving`, which raises the full-collection threshold (keeping a host's higher one)."""
    from starter.agent import Agent

    saved = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        frozen = gc.get_freeze_count()
        agent = Agent(str(small_catalog))
        assert gc.get_threshold() == (700, 10, 10) and gc.get_freeze_count() == frozen
        agent.freeze_for_serving()
        assert gc.get_threshold() == (700, 10, SETTINGS.process.full_collection_threshold)
        assert gc.get_freeze_count() > frozen
        gc.set_threshold(700, 10, 5000)        # a host's own higher setting is kept
        agent.freeze_for_serving()
        assert gc.get_threshold() == (700, 10, 5000)
    finally:
        gc.set_threshold(*saved)
        gc.unfreeze()

def test_most_probable_is_the_posteriors_first(small_catalog: Path) -> None:
    """The free-text opening's scenario is read off the best candidate without ranking them all."""
    from starter.reading.parse import parse_message
    from starter.reading.understand import Reading
    ix = CatalogIndex(small_catalog, SETTINGS.index, None)
    reading = Reading.of(parse_message("something black and cotton for summer", 1, {}))
    tracks, _ = RANK.open_tracks(ix, list(range(len(ix.products))), reading, {}, SETTINGS.evidence)
    assert POSTERIOR.most_probable(ix, tracks, SETTINGS.posterior) == POSTERIOR.posterior(ix, tracks, set(), SETTINGS.posterior)[0].idx
    assert POSTERIOR.most_probable(ix, {}, SETTINGS.posterior) is None


def test_long_messages_share_words_with_values_by_their_words(small_catalog: Path) -> None:
    """Above substring_scan_max_words said words, values are checked through their word sets: the
    similarity is the same as the full computation's."""
    ix = CatalogIndex(small_catalog, SETTINGS.index, None)
    long_said = frozenset(f"w{k}" for k in range(30)) | {"cotton"}
    short_said = frozenset({"cotton", "black"})
    assert len(long_said) > SETTINGS.index.substring_scan_max_words >= len(short_said)
    for p in ix.products:
        for said in (long_said, short_said, frozenset(f"w{k}" for k in range(30))):
            fast = SIM.value_similarity(ix, p.constraints, said)
            pred = frozenset().union(*(SIM._tok_words(v) for v in p.constraints))
            common = pred & said
            full = 0.0 if not common else (lambda r, q: 2 * r * q / (r + q))(
                ix.weight(common) / ix.weight(pred), ix.weight(common) / ix.weight(said))
            assert fast == full


def test_holds_any_equals_the_token_check_with_or_without_the_memo(small_catalog) -> None:
    """`holds_any` skips tokenising a cold product whose text holds none of the words; the answer
    is the token check's, cold or warm, for few words and for many."""
    from starter.index.catalog import CatalogIndex
    from starter.settings import SETTINGS
    cold = CatalogIndex(small_catalog, SETTINGS.index)
    warm = CatalogIndex(small_catalog, SETTINGS.index)
    few = [{"leather"}, {"black", "zzz"}, {"lea"}, {"boot", "boots"}, {"19.99"}, set()]
    many = [{f"w{k}" for k in range(SETTINGS.index.substring_scan_max_words + 1)} | {"leather"}]
    for i in range(len(warm.products)):
        warm.product_tokens(i)
    for group in (few, many):
        for words in group:
            for i in range(len(cold.products)):
                expected = not set(words).isdisjoint(warm.product_tokens(i))
                assert cold.holds_any(i, frozenset(words)) == expected == warm.holds_any(i, frozenset(words))
        if group is few:
            assert len(cold._product_tokens) < len(cold.products)     # some products were never tokenised


def test_tracks_are_arrays_the_garbage_collector_does_not_walk(small_catalog: Path) -> None:
    """The pool's tracks are numeric columns (starter/template/tracks.py): the collector tracks none of them,
    however many candidates a session holds (tuple tracks made each full collection 300-490 ms at a
    million products)."""
    from starter.agent import Agent
    agent = Agent(str(small_catalog))
    agent.reset("s", {})
    agent.respond("s", "I'm looking for Shirts Tees. A key requirement is: cotton.", 1, 10)
    agent.respond("s", "For that, what matters is: color: black; 100% Cotton.", 2, 10)
    tracks = agent.sessions["s"].tracks
    columns = [tracks.ids, tracks.scenario, tracks.disclosed, tracks.exact, tracks.loglik, tracks.text_ll,
               tracks.category_ll, *tracks.evidence]
    assert len(tracks) and len(tracks.evidence) == 2
    assert all(c.dtype != object and len(c) == len(tracks) and not gc.is_tracked(c) for c in columns)
