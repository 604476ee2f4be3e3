"""The turn over arrays is the per-candidate rule: card arrays, similarities, observe, questions.

Each array computation is checked against the per-candidate rule it replaced
(`contest.messages.reveal`, `similarity.value_similarity`, the per-track reply
judgement), value for value and float for float, on random cards and on the
proxy catalog's own values.
"""
from __future__ import annotations

import random
from operator import mul
from pathlib import Path

import numpy as np
import pytest

from contest import messages as M
from contest.card import CARD_SIZE
from contest.rules import hit_reward
from starter.template import questions as ASK
from starter.template import posterior as POSTERIOR
from starter.template import evidence as RANK
from tests import shopper_model as SM
from starter.template import similarity as SIM
from grounding.words import tokens
from starter.index.card_arrays import NO_VALUE, QUESTION_COLUMNS, REPLY_ATTRIBUTES, REPLY_COLUMN, CardArrays, value_words_of
from starter.index.catalog import CatalogIndex, Product
from starter.settings import QUESTION_ATTRIBUTES, SETTINGS
from starter.reading.parse import parse_message
from starter.index.product_table import columns_of
from starter.template.tracks import Track, TrackTable
from starter.reading.understand import Reading

KINDS = ["material", "color", "size", "style", "use_case", "feature", "budget"]


def _random_products(rng: random.Random, n: int) -> list[Product]:
    out = []
    for k in range(n):
        size = rng.randint(1, CARD_SIZE)
        values = tuple(rng.choice("abcd") + str(rng.randint(0, 2)) for _ in range(size))    # twins are common
        types = tuple(rng.choice(KINDS) for _ in range(size))
        out.append(Product(k, f"P{k}", "t", rng.choice(["s1", "s2"]), None, 0, 0.0, values, types))
    return out


def _mask(p: Product, disclosed: set[str]) -> int:
    return sum(1 << j for j, v in enumerate(p.constraints) if v in disclosed)


def test_card_arrays_reveal_and_disclose_as_the_rule_does_on_random_cards() -> None:
    rng = random.Random(11)
    products = _random_products(rng, 600)
    cols = columns_of(products)
    clue_words = {v: tuple(sorted(set(tokens(v)))) for v in cols.values}
    cards = CardArrays(cols, value_words_of(cols.values, clue_words, {w: 1 for ws in clue_words.values() for w in ws}),
                       lambda w: 1.0)
    ids = np.arange(len(products), dtype=np.int64)
    disclosed = [{v for v in p.constraints if rng.random() < 0.4} for p in products]
    masks = np.asarray([_mask(p, d) for p, d in zip(products, disclosed)], dtype=np.uint8)
    for attribute in REPLY_ATTRIBUTES + ("anything else",):
        positions, values = cards.revealed(ids, masks, REPLY_COLUMN[M.reply_attribute(attribute)])
        after = cards.disclose(ids, masks, positions)
        for k, p in enumerate(products):
            want = M.reveal(p.constraints, p.types, disclosed[k], attribute)
            got = tuple(cards.value_text[v] for v in values[k].tolist() if v != NO_VALUE)
            first, second = cards.split_codes(cards.pair_codes(values[k]))
            assert got == want and (int(first), int(second)) == tuple(values[k].tolist())
            assert after[k] == _mask(p, disclosed[k] | set(want))
    _, several = cards.revealed(ids, masks, QUESTION_COLUMNS)
    for k, p in enumerate(products[:50]):
        want = M.reveal_each(p.constraints, p.types, disclosed[k], QUESTION_ATTRIBUTES)
        assert [tuple(cards.value_text[v] for v in pair if v != NO_VALUE) for pair in several[k].tolist()] \
            == [want[a] for a in QUESTION_ATTRIBUTES]


@pytest.fixture(scope="module")
def proxy_index(proxy_catalog: Path) -> CatalogIndex:
    return CatalogIndex(proxy_catalog, SETTINGS.index)


def _said_and_pairs(index: CatalogIndex, rng: random.Random) -> tuple[frozenset[str], np.ndarray, np.ndarray]:
    texts = index.cards.value_text
    said = SIM._tok_set(texts[rng.randrange(len(texts))]) | frozenset(rng.sample(["black", "cotton", "zzq"], 1))
    near = [k for k in rng.sample(range(len(texts)), 2000) if not said.isdisjoint(SIM._tok_words(texts[k]))]
    pool = near[:80] + rng.sample(range(len(texts)), 80)
    first = np.asarray([rng.choice(pool) for _ in range(200)], dtype=np.int64)
    second = np.asarray([rng.choice(pool + [NO_VALUE] * 40) for _ in range(200)], dtype=np.int64)
    return said, first, second


def test_pair_similarities_are_value_similarity_float_for_float(proxy_index: CatalogIndex) -> None:
    rng = random.Random(5)
    texts = proxy_index.cards.value_text
    for _ in range(40):
        said, first, second = _said_and_pairs(proxy_index, rng)
        got = SIM.pair_similarities(proxy_index, first, second, said)
        want = [SIM.value_similarity(proxy_index, (texts[a], texts[b]) if b >= 0 else (texts[a],), said)
                for a, b in zip(first.tolist(), second.tolist())]
        assert got.tolist() == want
        assert 0 < sum(x > 0 for x in want) < len(want)
        alone = SIM.pair_similarities(proxy_index, first, np.full(len(first), NO_VALUE), said)
        assert alone.tolist() == [SIM.value_similarity(proxy_index, (texts[a],), said) for a in first.tolist()]
    # Nothing said: 1.0 for a pair with no content words either (a value of filler words only), else 0.0.
    wordless = [k for k, t in enumerate(texts) if not SIM._tok_words(t)][:2]
    first = np.asarray(wordless + wordless + [0, 1], dtype=np.int64)
    second = np.asarray([NO_VALUE] * len(wordless) + wordless[::-1] + [NO_VALUE, 3], dtype=np.int64)
    got = SIM.pair_similarities(proxy_index, first, second, frozenset())
    want = [SIM.value_similarity(proxy_index, (texts[a], texts[b]) if b >= 0 else (texts[a],), frozenset())
            for a, b in zip(first.tolist(), second.tolist())]
    assert wordless and got.tolist() == want and 1.0 in want and 0.0 in want


def test_opening_similarities_are_value_similarity_and_a_valueless_card_predicts_nothing(
        proxy_index: CatalogIndex) -> None:
    """A free-text opening's similarities, worked out per group of values judged against the same words,
    are `value_similarity`'s floats; a card without values (no value id) predicts no words: 1.0 when
    nothing beyond the shelf was said, else 0.0 (never another value's text)."""
    rng = random.Random(11)
    texts = proxy_index.cards.value_text
    keys = []
    for _ in range(6):
        said, first, _ = _said_and_pairs(proxy_index, rng)
        keys += [(v, said) for v in dict.fromkeys(first.tolist())] + [(NO_VALUE, said)]
    keys.append((NO_VALUE, frozenset()))
    sims: dict = {}
    RANK._add_similarities(proxy_index, keys, sims)
    assert set(sims) == set(keys)
    for (v, said), got in sims.items():
        assert got == (SIM.value_similarity(proxy_index, (texts[v],), said) if v >= 0 else float(not said))
    assert any(got > 0 for (v, _), got in sims.items() if v >= 0)


def _reply_reference(index: CatalogIndex, tracks: TrackTable, obs: Reading, ask: str) -> list[Track]:
    """The per-candidate reply judgement the arrays replaced (template or free-text values replies)."""
    said = RANK._without_budget((SIM._tok_set(obs.value_text if obs.template and obs.value_text is not None
                                              else obs.text) | obs.extra_tokens) - frozenset(obs.negated), obs)
    beta, out = SETTINGS.evidence.mismatch_beta, []
    for i in tracks.ids.tolist():
        t, p = tracks.track(i), index.products[i]
        disclosed = tuple(v for j, v in enumerate(p.constraints) if t.disclosed >> j & 1)
        values = SM.answer_values(p, disclosed, ask)
        if obs.kind == "no_preference":
            sim = 1.0 if not values else SETTINGS.evidence.no_preference_sim
        elif not said:
            sim = 1.0
        elif not values:
            sim = SETTINGS.evidence.no_values_sim
        else:
            sim = SIM.value_similarity(index, values, said)
        if not obs.template and said and obs.kind == "values":
            sim = max(sim, SETTINGS.evidence.any_value_credit * RANK.said_coverage(index, i, said))
        exact = obs.template and M.reply_message(values, ask) == obs.text.strip()
        out.append(Track(t.scenario, _mask(p, set(disclosed) | set(values)), t.exact and exact,
                         t.loglik - beta * (1.0 - sim), t.text_ll, t.category_ll, t.evidence + (round(sim, 4),)))
    return out


def test_observe_over_arrays_is_the_per_candidate_judgement(proxy_index: CatalogIndex) -> None:
    rng = random.Random(3)
    index = proxy_index
    shelf = max(index.shelves, key=lambda s: len(index.shelves[s]))
    ids = index.shelves[shelf][:400]
    for ask in ["other", "material", "color", "style", "feature", "brand"]:
        rows = [Track("buying", _mask(index.products[i], set(rng.sample(index.products[i].constraints, 1))),
                      rng.random() < 0.5, -rng.random(), 0.0, -0.5, (0.25,)) for i in ids]
        tracks = TrackTable.of_rows(ids, rows)
        target = index.products[rng.choice(ids)]
        disclosed = tuple(v for j, v in enumerate(target.constraints) if rows[ids.index(target.idx)].disclosed >> j & 1)
        for text in [M.reply_message(SM.answer_values(target, disclosed, ask), ask), M.no_preference_message(ask),
                     "black cotton, nothing fancy", "For that, what matters is: not a value; at all."]:
            obs = Reading.of(parse_message(text, 2, {}))
            got = RANK.observe(index, tracks, obs, ask, SETTINGS.evidence)
            want = _reply_reference(index, tracks, obs, ask)
            assert [got.track(i) for i in ids] == want, (ask, text)


def _questions_reference(index: CatalogIndex, ranked, tracks: TrackTable, shown: set[int], turn: int):
    """The per-candidate, per-group question valuation the arrays replaced."""
    cfg, rest, covered = SETTINGS.questions, [], 0.0
    enough = cfg.question_mass_covered * (1.0 - sum(r.prob for r in ranked if r.idx in shown))
    for r in ranked:
        if r.idx in shown:
            continue
        rest.append(r)
        covered += r.prob
        if len(rest) >= cfg.question_candidates or covered >= enough:
            break
    probs = [r.prob for r in rest]
    mass = sum(probs)
    if mass <= 0 or len(rest) <= 1:
        return []
    base, reward, shares = max(probs) / mass, hit_reward(1, turn + 1), [q / mass for q in probs]
    answers = []
    for r in rest:
        p, mask = index.products[r.idx], tracks.track(r.idx).disclosed
        disclosed = {v for j, v in enumerate(p.constraints) if mask >> j & 1}
        answers.append(M.reveal_each(p.constraints, p.types, disclosed, QUESTION_ATTRIBUTES))
    out = []
    for attribute in QUESTION_ATTRIBUTES:
        groups: dict[tuple[str, ...], list[float]] = {}
        for a, q in zip(answers, shares):
            groups.setdefault(a[attribute], []).append(q)
        sums = [sum(g) for g in groups.values()]
        top1 = sum(map(max, groups.values()))
        conc = sum(sum(map(mul, g, g)) / s for g, s in zip(groups.values(), sums) if s > 0)
        out.append(ASK.QuestionRow(attribute, round((top1 - base) * reward, 6), round(top1, 6), round(conc, 6),
                                     sum(cfg.min_group_mass <= s for s in sums)))
    order = {a: k for k, a in enumerate(QUESTION_ATTRIBUTES)}
    return sorted(out, key=lambda q: (-q.value, -q.concentration, -q.groups, order[q.attribute]))


def test_question_values_over_arrays_are_the_per_group_sums(proxy_index: CatalogIndex) -> None:
    rng = random.Random(9)
    index = proxy_index
    shelves = sorted(index.shelves, key=lambda s: -len(index.shelves[s]))[:6]
    for shelf in shelves:
        ids = index.shelves[shelf][:300]
        rows = [Track("buying", _mask(index.products[i], set(rng.sample(index.products[i].constraints,
                                                                          rng.randint(0, 2)))),
                      rng.random() < 0.3, -3 * rng.random(), 0.0, 0.0) for i in ids]
        tracks = TrackTable.of_rows(ids, rows)
        ranked = POSTERIOR.posterior(index, tracks, set(), SETTINGS.posterior)
        for shown, turn in [(set(), 1), ({ranked[0].idx}, 2), ({ranked[3].idx}, 5)]:
            want = _questions_reference(index, ranked, tracks, shown, turn)
            assert ASK.value_questions(index, ranked, tracks, shown, turn, SETTINGS.questions) == want
            assert ASK.value_questions(index, list(ranked), tracks, shown, turn, SETTINGS.questions) == want
