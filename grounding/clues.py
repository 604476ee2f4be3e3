"""The clue index: which catalog card values (clues) a piece of shopper text refers to.

Message content tokens (typos corrected against the catalog vocabulary) are
looked up in an inverted index token -> clues; each clue accumulates the IDF
weight it shares with the message; a shortlist is re-scored with clue
coverage, message coverage and a rapidfuzz `token_sort_ratio` of the clue
against the message fragment it matched:
score = 100 * (w1 * F1(clue coverage, message coverage) + w2 * clue coverage
+ w3 * token_sort_ratio), ties by clue string.  Figures:
`scripts/bench_grounding.py` (evaluation_results/).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
from rapidfuzz import fuzz, process

from contest.card import VALUE_LIMIT
from grounding.budget import parse_budget
from grounding.injection import (ASIN_RE, HARD_INSTRUCTION_RE, ID_RE, SOFT_INSTRUCTION_RE, URL_RE, hard_injection,
                                 soft_injection)
from grounding.settings import GroundingTunables
from grounding.slips import plausible_slip
from grounding.topk import best_first
from grounding.vocabulary import Vocabulary
from grounding.words import LEXICON, is_content, tokens, tokens_with_spans

_CLAUSE_END_RE = re.compile(r"[.;!?\n]")

# Hand-set, where they are read (never swept; bench_grounding's recall was checked with them):
RARE_WORD_MIN_LEN = 5          # a catalog word this long on <= rare_postings products may itself be a typo
TYPO_CANDIDATES = 8            # closest vocabulary words read per unknown token
COMMON_NEIGHBOUR_RATIO = 20    # a neighbour on this many times more products is the likely intended word
SPAN_GAP = 3                   # matched words this far apart still quote one phrase


class FragmentMatches(list):
    """`match_fragments` result: a list of (clue, score) best first, plus the
    message phrases that matched nothing as `rejected_phrases` [(phrase, reason)]."""

    def __init__(self, items=(), rejected_phrases=None):
        super().__init__(items)
        self.rejected_phrases: list[tuple[str, str]] = list(rejected_phrases or [])


@dataclass
class Query:
    """A text prepared for clue matching."""

    toks: list[str]                       # content tokens in order (raw spelling)
    spans: list[tuple[int, int]]          # char span of each in the text
    forms: list[list[tuple[str, float]]]  # per token: (vocabulary form, similarity 0..1)
    weights: dict[str, float]             # vocabulary form -> IDF weight x similarity (max)
    mass: float                           # IDF mass of the whole query (unknown words included)


def clue_postings(clue_list: Sequence[str], clue_words: Mapping[str, tuple[str, ...]],
                  idf_of: Callable[[str], float]) -> tuple[dict[str, list[int]], list[float]]:
    """What the clue index is built on: each content word's clue positions (in `clue_list` order)
    and each clue's mass (the IDF of its content words, added in word order)."""
    postings: dict[str, list[int]] = {}
    mass: list[float] = []
    weight: dict[str, float | None] = {}      # per word: its IDF when a content word, else None
    for i, clue in enumerate(clue_list):
        m = 0.0
        for t in clue_words[clue]:
            w = weight.get(t, -1.0)
            if w == -1.0:
                w = weight[t] = idf_of(t) if is_content(t) else None
            if w is not None:
                lst = postings.get(t)
                if lst is None:
                    postings[t] = [i]
                else:
                    lst.append(i)
                m += w
        mass.append(m)
    return postings, mass


class ClueIndex:
    """Clue postings, spelling correction and fragment matching over one catalog."""

    def __init__(self, vocab: Vocabulary, shelf_words: frozenset[str], tunables: GroundingTunables) -> None:
        self.catalog = vocab
        self.cfg = tunables
        # Clues in sorted order; posting lists hold positions in this list.  A vocabulary may hand it
        # over (`clue_list()`: the agent's index stores it; sorting a million values takes a second).
        given = getattr(vocab, "clue_list", None)
        listed = given() if callable(given) else None
        self.clue_list: list[str] = listed if listed is not None else sorted(vocab.clues)
        # A vocabulary may hand over what `clue_postings` computes (the agent's index stores it).
        stored = getattr(vocab, "clue_postings", None)
        got = stored() if callable(stored) else None
        postings, mass = got if got is not None else clue_postings(self.clue_list, vocab.clue_words, vocab.idf_of)
        self.postings = postings
        self.clue_mass = mass
        self.shelf_words = shelf_words
        self.vocab: frozenset[str] = frozenset(set(postings) | set(shelf_words) | set(LEXICON))
        # Correction candidates: words (not numbers) long enough to be typo targets.
        self._fuzzy_vocab: list[str] = sorted(t for t in self.vocab if t.isalpha()
                                              and len(t) >= tunables.fuzzy_min_len - 1)
        self._correct_cache: dict[str, tuple[tuple[str, float], ...]] = {}
        self._slip_cache: dict[str, str | None] = {}
        self._fragments: frozenset[str] | None = None
        self._posting_arrays: dict[str, np.ndarray] = {}
        self._mass_array: np.ndarray | None = None

    # ------------------------------------------------------------------ vocabulary
    def df(self, tok: str) -> int:
        return len(self.postings.get(tok, ()))

    def idf(self, tok: str) -> float:
        return self.catalog.idf_of(tok)

    def correct(self, tok: str) -> tuple[tuple[str, float], ...]:
        """Vocabulary forms of a token: itself when known, else its closest catalog words
        (fuzz.ratio >= token_ratio_min, ties to the more frequent word, then alphabetical)."""
        cached = self._correct_cache.get(tok)
        if cached is not None:
            return cached
        cfg = self.cfg
        out: tuple[tuple[str, float], ...]
        known = tok in self.vocab
        if known and not (self.df(tok) <= cfg.rare_postings and len(tok) >= RARE_WORD_MIN_LEN and tok.isalpha()):
            out = ((tok, 1.0),)
        elif len(tok) < cfg.fuzzy_min_len or not tok.isalpha():
            out = ((tok, 1.0),) if known else ()
        else:
            hits = process.extract(tok, self._fuzzy_vocab, scorer=fuzz.ratio, score_cutoff=cfg.token_ratio_min,
                                   limit=TYPO_CANDIDATES)
            hits = [(w, s) for w, s, _ in hits if w != tok]
            hits.sort(key=lambda h: (-round(h[1], 6), -self.df(h[0]), h[0]))
            if known:
                # A rare catalog word: keep it, and add a much more common neighbour (a likely typo of it).
                common = [(w, s / 100.0) for w, s in hits if self.df(w) >= COMMON_NEIGHBOUR_RATIO * max(1, self.df(tok))]
                out = ((tok, 1.0),) + tuple(common[:1])
            else:
                out = tuple((w, s / 100.0) for w, s in hits[:1])
        if len(self._correct_cache) < cfg.correction_cache:
            self._correct_cache[tok] = out
        return out

    def slip_of(self, tok: str, min_ratio: float) -> str | None:
        """The catalog word a person most likely meant by an unknown word, when the word is a slip of the
        keyboard of one (`grounding.slips`): among its closest catalog words by `fuzz.ratio` (at least
        `min_ratio`, 0-1), the most similar plausible slip, ties to the more frequent word, then alphabetical.
        A known word, a number or a short word has none."""
        if tok in self.vocab or len(tok) < self.cfg.fuzzy_min_len or not tok.isalpha():
            return None
        if tok not in self._slip_cache:
            hits = process.extract(tok, self._fuzzy_vocab, scorer=fuzz.ratio, score_cutoff=100.0 * min_ratio,
                                   limit=TYPO_CANDIDATES)
            cut = self.cut_fragments()
            slips = sorted((w for w, s, _ in hits if plausible_slip(tok, w) and w not in cut),
                           key=lambda w: (-round(fuzz.ratio(tok, w), 6), -self.df(w), w))
            if len(self._slip_cache) >= self.cfg.correction_cache:
                self._slip_cache.clear()
            self._slip_cache[tok] = slips[0] if slips else None
        return self._slip_cache[tok]

    def cut_fragments(self) -> frozenset[str]:
        """Words the catalog holds only as the broken-off end of a card value cut at `VALUE_LIMIT` characters
        ("... damaged through misuse or altera", "... the highest quali"): no word a person means ("thru" is
        no slip of "throu").  Read on first use (the template path never asks)."""
        if self._fragments is None:
            ends = Counter(found[-1] for c in self.clue_list if len(c) == VALUE_LIMIT
                           and (found := tokens(c[-40:])))
            self._fragments = frozenset(w for w, n in ends.items() if w in self.postings
                                        and n >= len(self.postings[w]) and w not in self.shelf_words
                                        and w not in LEXICON)
        return self._fragments

    def prepare(self, text: str, drop: set[int] | None = None) -> Query:
        toks: list[str] = []
        spans: list[tuple[int, int]] = []
        for pos, (t, a, b) in enumerate(tokens_with_spans(text)):
            if drop and pos in drop:
                continue
            if is_content(t):
                toks.append(t)
                spans.append((a, b))
        forms: list[list[tuple[str, float]]] = []
        weights: dict[str, float] = {}
        mass = 0.0
        seen: set[str] = set()
        for t in toks:
            f = list(self.correct(t))
            forms.append(f)
            if t in seen:
                continue
            seen.add(t)
            # All forms of a token share the weight of its most common form: a rare catalog
            # spelling ("polyster") must not outweigh the word it stands for.
            base = min((self.idf(v) for v, _ in f), default=self.catalog.default_idf)
            best = 0.0
            for v, s in f:
                w = base * s
                weights[v] = max(weights.get(v, 0.0), w)
                best = max(best, w)
            mass += best if f else base
        return Query(toks, spans, forms, weights, mass)

    # ------------------------------------------------------------------ clue ranking
    def rank_clues(self, q: Query, limit: int, min_clue_cov: float = 0.0,
                   min_query_cov: float = 0.0) -> list[tuple[str, float, float, float, tuple[int, int] | None]]:
        """(clue, score, clue coverage, query coverage, token span in q) best first."""
        if not q.weights:
            return []
        qmass = q.mass or 1.0
        cm = self.clue_mass
        w_f1, w_rec, w_sim = self.cfg.fragment_weights
        short = self._shortlist(q, qmass)
        out = []
        for c, m in short:
            clue = self.clue_list[c]
            rec = min(1.0, m / cm[c]) if cm[c] > 0 else 0.0
            prec = min(1.0, m / qmass)
            if rec < min_clue_cov or prec < min_query_cov:
                continue
            clue_toks = [t for t in tokens(clue) if is_content(t)]
            ctset = set(clue_toks)
            pos = [i for i, f in enumerate(q.forms) if any(v in ctset for v, _ in f)]
            span = _densest(pos, q, self)
            frag = " ".join(_form(q.forms[i], q.toks[i], ctset) for i in range(span[0], span[1] + 1)) if span else ""
            sim = fuzz.token_sort_ratio(frag, " ".join(clue_toks)) / 100.0 if frag else 0.0
            f1 = 2 * rec * prec / (rec + prec) if rec + prec > 0 else 0.0
            score = 100.0 * (w_f1 * f1 + w_rec * rec + w_sim * sim)
            out.append((clue, round(score, 4), round(rec, 4), round(prec, 4), span))
        out.sort(key=lambda r: (-r[1], r[0]))
        return out[:limit]

    def _shortlist(self, q: Query, qmass: float) -> list[tuple[int, float]]:
        """The `shortlist` clues with the most shared weight relative to their and the query's mass
        (F1 of the masses; ties: lower clue position), with that weight.  Arrays, with the floats of
        a dict loop over the query's words (sorted) and their postings: bincount adds each clue's
        weights one by one in that order.  A common word's postings made the loop touch thousands of
        clues."""
        order = sorted(q.weights)
        lists = [self._posting_array(v) for v in order]
        ids = np.concatenate(lists)
        if not len(ids):
            return []
        size = len(self.clue_list)
        acc = np.bincount(ids, weights=np.repeat(np.array([q.weights[v] for v in order], dtype=np.float64),
                                                 [len(a) for a in lists]), minlength=size)
        clues = np.flatnonzero(np.bincount(ids, minlength=size))
        shared = acc[clues]
        if self._mass_array is None:
            self._mass_array = np.array(self.clue_mass, dtype=np.float64)
        key = 2.0 * shared / (self._mass_array[clues] + qmass)
        return [(int(clues[k]), float(shared[k])) for k in best_first(clues, key, self.cfg.shortlist)]

    def _posting_array(self, word: str) -> np.ndarray:
        """A word's clue postings as an array (memoised; the vocabulary bounds it)."""
        got = self._posting_arrays.get(word)
        if got is None:
            got = np.array(self.postings.get(word, ()), dtype=np.int64)
            if len(got):
                self._posting_arrays[word] = got
        return got

    def match_fragments(self, raw_message: str, limit: int = 10) -> FragmentMatches:
        """Clue strings that fragments of the message refer to, as (clue, score 0..100) best first
        (ties by clue string).  Phrases of the message that match no clue, and phrases that are ids
        or instructions (never matched), are listed in `.rejected_phrases` with the reason."""
        text = raw_message if isinstance(raw_message, str) else ("" if raw_message is None else str(raw_message))
        text = text[:self.cfg.max_message_chars]
        rejected: list[tuple[str, str]] = []
        drop = injection_token_positions(text)
        q = self.prepare(text, drop)
        ranked = self.rank_clues(q, max(1, limit), min_clue_cov=self.cfg.fragment_clue_coverage_min)
        # Which message tokens did the returned clues explain?
        explained: set[int] = set()
        for clue, _s, _r, _p, _span in ranked:
            ct = {t for t in tokens(clue) if is_content(t)}
            for i, f in enumerate(q.forms):
                if any(v in ct for v, _ in f):
                    explained.add(i)
        spans_explained = {q.spans[i] for i in explained}
        all_toks = tokens_with_spans(text)
        # Id / instruction runs were never matched: say so.
        run: list[int] = []
        for pos in sorted(drop) + [-2]:
            if run and pos != run[-1] + 1:
                a, b = all_toks[run[0]][1], all_toks[run[-1]][2]
                frag = text[a:b]
                rejected.append((frag, hard_injection(frag) or soft_injection(frag)
                                 or "looks like an instruction or id"))
                run = []
            if pos >= 0:
                run.append(pos)
        for phrase, a, b in _phrases(text):
            content = [sp for sp in q.spans if a <= sp[0] < b]
            if content and not any(sp in spans_explained for sp in content):
                if parse_budget(phrase) is not None:
                    rejected.append((phrase, "a budget, not a catalog clue (see parse_budget)"))
                else:
                    rejected.append((phrase, "no catalog clue matches"))
        return FragmentMatches([(c, s) for c, s, _r, _p, _sp in ranked], rejected)

    def vocab_shares(self, q: Query) -> tuple[float, float, float]:
        """IDF-weighted shares of the query's words that are catalog words, lexicon words, shelf words."""
        tot = known = lex = shelf = 0.0
        for t, f in zip(q.toks, q.forms):
            w = min((self.idf(v) for v, _ in f), default=self.catalog.default_idf)
            tot += w
            if f:
                s = max(s for _, s in f)
                known += w * s
                if any(v in LEXICON for v, _ in f):
                    lex += w * s
                if any(v in self.shelf_words for v, _ in f):
                    shelf += w * s
        if tot <= 0:
            return 0.0, 0.0, 0.0
        return known / tot, lex / tot, shelf / tot


def _densest(pos: list[int], q: Query, index: ClueIndex) -> tuple[int, int] | None:
    """The run of matched positions (gaps <= SPAN_GAP tokens) with the most IDF weight."""
    if not pos:
        return None
    best = None
    run = [pos[0]]

    def weight(r):
        return sum(max((index.idf(v) * s for v, s in q.forms[i]), default=0.0) for i in r)

    for p in pos[1:]:
        if p - run[-1] <= SPAN_GAP:
            run.append(p)
        else:
            w = weight(run)
            if best is None or w > best[0]:
                best = (w, run[0], run[-1])
            run = [p]
    w = weight(run)
    if best is None or w > best[0]:
        best = (w, run[0], run[-1])
    return best[1], best[2]


def _form(forms: list[tuple[str, float]], raw: str, ctset: set[str]) -> str:
    for v, _ in forms:
        if v in ctset:
            return v
    return forms[0][0] if forms else raw


def _phrases(text: str) -> list[tuple[str, int, int]]:
    """Clauses of the message: split at punctuation and at and / but / or."""
    out = []
    for m in re.finditer(r"[^,;.!?\n]+(?:\.\d+[^,;.!?\n]*)*", text):
        seg_start = m.start()
        seg = m.group()
        last = 0
        for cm in re.finditer(r"\s+(?:and|but|or|also|plus)\s+", seg, re.I):
            part = seg[last:cm.start()]
            if part.strip():
                out.append((part.strip(), seg_start + last, seg_start + cm.start()))
            last = cm.end()
        part = seg[last:]
        if part.strip():
            out.append((part.strip(), seg_start + last, seg_start + len(seg)))
    return out


def injection_token_positions(text: str, soft: bool = True) -> set[int]:
    """Token positions that belong to ids, URLs or instructions (never matched, never grounding).
    A hard instruction ("ignore all instructions", "system: ...", "you are now ...") takes the rest
    of its clause with it; with `soft`, lone instruction words ("recommend") are dropped too."""
    bad: list[tuple[int, int]] = []
    for rx in (ASIN_RE, ID_RE, URL_RE):
        bad.extend((m.start(), m.end()) for m in rx.finditer(text))
    for m in HARD_INSTRUCTION_RE.finditer(text):
        end = _CLAUSE_END_RE.search(text, m.end())
        bad.append((m.start(), end.start() if end else len(text)))
    if soft:
        bad.extend((m.start(), m.end()) for m in SOFT_INSTRUCTION_RE.finditer(text))
    if not bad:
        return set()
    drop = set()
    for pos, (_, a, b) in enumerate(tokens_with_spans(text)):
        if any(a < e and s < b for s, e in bad):
            drop.add(pos)
    return drop
