"""The grounding gate: the single place where text becomes state.

Every proposal -- from the templates, the regexes, the model or fuzzy
matching -- passes `Gate.ground` before it may reach retrieval or ranking.  A
proposal is accepted only when it is traceable:

1. its attribute is one of the protocol's allowed attributes;
2. its value is the shopper's own words: every content token of the value is
   looked up among the message's tokens (exact, or `fuzz.ratio` >= 80 for
   tokens of 4+ letters, so typos ground; numbers and short tokens must be
   exact), and the found tokens must carry >= 60 % of the value's IDF weight
   (so a dropped or mangled common word does not sink a value, while the rare
   word that identifies it must be there);
3. its value maps to catalog vocabulary: a clue string (exact, or a clue that
   holds >= 60 % of the value's IDF weight after typo correction), a shelf key
   or shelf word, a material / colour word, or -- for `budget` only -- a
   parsable budget (a number, or a qualitative "cheap" / "not too pricey"
   when the message has a price word);
4. it is not an id, a URL or an instruction (`B0XXXXXXXX`, "ignore previous
   instructions", "system: ...", "recommend ..."), even when the shopper typed
   it.  The one exemption: a value taken from an official template message
   (source "template") that is verbatim a catalog card value -- 16 real card
   values name an ASIN and hundreds say "recommend" or "ignore".

Everything else is returned as `Rejected` with a specific reason.

`match_fragments` finds the clue strings a free-text message refers to, even
reworded or damaged: message content tokens (typos corrected against the
catalog vocabulary) are looked up in an inverted index token -> clues, each
clue accumulates the IDF weight it shares with the message, a shortlist is
re-scored with clue coverage, message coverage and a rapidfuzz
`token_sort_ratio` of the clue against the message fragment it matched:
score = 100 * (0.55 * F1(clue coverage, message coverage) + 0.30 * clue
coverage + 0.15 * token_sort_ratio), ties by clue string.

Measured on the 50k proxy catalog (scripts/bench_grounding.py): build 0.55 s,
14.5 MiB; match_fragments median ~5 ms, p95 ~9 ms for 20-47-word messages;
top-3 recall 0.955 on card values with a word dropped (every miss dropped
the word that told the value apart), 1.0 with words reordered or a typo.
A 4000-character message (the cap) takes ~60 ms.
"""
from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from starter.catalog import CatalogIndex, tokens
from starter.config import ALLOWED_ATTRIBUTES

from grounding.text import (ASIN_RE, HARD_INSTRUCTION_RE, ID_RE, LEXICON, PRICE_CUES, SOFT_INSTRUCTION_RE, STOP,
                            URL_RE, Budget, content_tokens, hard_injection, is_content, is_number, parse_budget,
                            qualitative_budget,
                            soft_injection, tokens_with_spans)

SOURCES: tuple[str, ...] = ("template", "regex", "llm", "fuzzy")
# How far a source is trusted once its proposal is traceable (scales confidence only).
SOURCE_TRUST = {"template": 1.0, "regex": 0.95, "llm": 0.9, "fuzzy": 0.85}

TOKEN_RATIO_MIN = 80.0        # per-token fuzz.ratio for a typo to count as the same word
FUZZY_MIN_LEN = 4             # shorter tokens (and numbers) must match exactly
VALUE_IN_MESSAGE_MIN = 0.60   # IDF-weighted share of the value's tokens found in the message
VALUE_IN_CLUE_MIN = 0.60      # IDF-weighted share of the value's tokens that one clue must hold
SHELF_MATCH_MIN = 80.0        # match_shelf score for a category value to name a shelf
FRAGMENT_CLUE_COVERAGE_MIN = 0.5   # a returned fragment match covers >= half the clue's IDF weight
SHORTLIST = 60                # clues re-scored with rapidfuzz per query
MAX_PROPOSALS = 40
MAX_VALUE_CHARS = 200
_TSHIRT_RE = re.compile(r"\bt[- ]?shirt", re.I)
_LEADING_NEGATION_RE = re.compile(r"(?:no|not|without|avoid|except|never|nothing|anything but|none of)\s+", re.I)
_CLAUSE_END_RE = re.compile(r"[.;!?\n]")
RARE_POSTINGS = 3             # an in-vocabulary token this rare may itself be a typo


@dataclass
class Proposal:
    """A candidate constraint, not yet trusted."""

    attribute: str
    value: str
    negated: bool = False
    source: str = "llm"      # template | regex | llm | fuzzy (default: the least trusted producer)


@dataclass
class Grounded:
    """A proposal that passed the gate."""

    attribute: str
    value: str
    negated: bool
    source: str
    confidence: float                 # 0..1
    evidence: str                     # the shopper's words that support it (quoted from the message)
    clue_matches: list[str]           # catalog clue strings the value maps to, best first
    canonical: str = ""               # the value with typos corrected to catalog words
    shelf_matches: list[str] = field(default_factory=list)
    budget: Budget | None = None      # for attribute "budget"


@dataclass
class Rejected:
    """A proposal the gate refused, and why."""

    attribute: str
    value: str
    source: str
    reason: str


class FragmentMatches(list):
    """`match_fragments` result: a list of (clue, score) best first, plus the
    message phrases that matched nothing as `rejected_phrases` [(phrase, reason)]."""

    def __init__(self, items=(), rejected_phrases=None):
        super().__init__(items)
        self.rejected_phrases: list[tuple[str, str]] = list(rejected_phrases or [])


@dataclass
class _Query:
    """A text prepared for clue matching."""

    toks: list[str]                       # content tokens in order (raw spelling)
    spans: list[tuple[int, int]]          # char span of each in the text
    forms: list[list[tuple[str, float]]]  # per token: (vocabulary form, similarity 0..1)
    weights: dict[str, float]             # vocabulary form -> IDF weight x similarity (max)
    mass: float                           # IDF mass of the whole query (unknown words included)


class Gate:
    """Grounds proposals and matches fragments against one catalog."""

    def __init__(self, index: CatalogIndex) -> None:
        self.index = index
        self.allowed = frozenset(ALLOWED_ATTRIBUTES)
        # Clues in sorted order; posting lists hold positions in this list.
        self.clue_list: list[str] = sorted(index.clues)
        postings: dict[str, list[int]] = {}
        mass: list[float] = []
        idf = index.idf
        dflt = index.default_idf
        for i, clue in enumerate(self.clue_list):
            m = 0.0
            for t in set(tokens(clue)):
                if is_content(t):
                    lst = postings.get(t)
                    if lst is None:
                        postings[t] = [i]
                    else:
                        lst.append(i)
                    m += idf.get(t, dflt)
            mass.append(m)
        self.postings = postings
        self.clue_mass = mass
        vocab = set(postings) | set(index.shelf_vocab) | set(LEXICON)
        self.vocab: frozenset[str] = frozenset(vocab)
        # Correction candidates: words (not numbers) long enough to be typo targets.
        self._fuzzy_vocab: list[str] = sorted(t for t in vocab if t.isalpha() and len(t) >= FUZZY_MIN_LEN - 1)
        self._shelf_stemmed: list[str] | None = None   # built on the first match_shelf call
        self._shelf_words: list[str] = []
        self._correct_cache: dict[str, tuple[tuple[str, float], ...]] = {}

    # ------------------------------------------------------------------ vocabulary
    def _df(self, tok: str) -> int:
        return len(self.postings.get(tok, ()))

    def idf(self, tok: str) -> float:
        return self.index.idf_of(tok)

    def correct(self, tok: str) -> tuple[tuple[str, float], ...]:
        """Vocabulary forms of a token: itself when known, else its closest catalog words
        (fuzz.ratio >= 80, ties to the more frequent word, then alphabetical)."""
        cached = self._correct_cache.get(tok)
        if cached is not None:
            return cached
        out: tuple[tuple[str, float], ...]
        known = tok in self.vocab
        if known and not (self._df(tok) <= RARE_POSTINGS and len(tok) >= 5 and tok.isalpha()):
            out = ((tok, 1.0),)
        elif len(tok) < FUZZY_MIN_LEN or not tok.isalpha():
            out = ((tok, 1.0),) if known else ()
        else:
            hits = process.extract(tok, self._fuzzy_vocab, scorer=fuzz.ratio, score_cutoff=TOKEN_RATIO_MIN,
                                   limit=8)
            hits = [(w, s) for w, s, _ in hits if w != tok]
            hits.sort(key=lambda h: (-round(h[1], 6), -self._df(h[0]), h[0]))
            if known:
                # A rare catalog word: keep it, and add a much more common neighbour (a likely typo of it).
                common = [(w, s / 100.0) for w, s in hits if self._df(w) >= 20 * max(1, self._df(tok))]
                out = ((tok, 1.0),) + tuple(common[:1])
            else:
                out = tuple((w, s / 100.0) for w, s in hits[:1])
        if len(self._correct_cache) < 50_000:
            self._correct_cache[tok] = out
        return out

    def _prepare(self, text: str, drop: set[int] | None = None) -> _Query:
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
            base = min((self.idf(v) for v, _ in f), default=self.index.default_idf)
            best = 0.0
            for v, s in f:
                w = base * s
                weights[v] = max(weights.get(v, 0.0), w)
                best = max(best, w)
            mass += best if f else base
        return _Query(toks, spans, forms, weights, mass)

    # ------------------------------------------------------------------ clue ranking
    def _rank_clues(self, q: _Query, limit: int, min_clue_cov: float = 0.0,
                    min_query_cov: float = 0.0) -> list[tuple[str, float, float, float, tuple[int, int] | None]]:
        """(clue, score, clue coverage, query coverage, token span in q) best first."""
        if not q.weights:
            return []
        acc: dict[int, float] = {}
        for v in sorted(q.weights):
            w = q.weights[v]
            get = acc.get
            for c in self.postings.get(v, ()):
                acc[c] = get(c, 0.0) + w
        if not acc:
            return []
        qmass = q.mass or 1.0
        cm = self.clue_mass
        short = heapq.nlargest(SHORTLIST, acc.items(), key=lambda kv: (2.0 * kv[1] / (cm[kv[0]] + qmass), -kv[0]))
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
            score = 100.0 * (0.55 * f1 + 0.30 * rec + 0.15 * sim)
            out.append((clue, round(score, 4), round(rec, 4), round(prec, 4), span))
        out.sort(key=lambda r: (-r[1], r[0]))
        return out[:limit]

    def match_fragments(self, raw_message: str, limit: int = 10) -> FragmentMatches:
        """Clue strings that fragments of the message refer to, as (clue, score 0..100) best first
        (ties by clue string).  Phrases of the message that match no clue, and phrases that are ids
        or instructions (never matched), are listed in `.rejected_phrases` with the reason."""
        text = raw_message if isinstance(raw_message, str) else ("" if raw_message is None else str(raw_message))
        text = text[:4000]
        rejected: list[tuple[str, str]] = []
        drop = _injection_token_positions(text)
        q = self._prepare(text, drop)
        ranked = self._rank_clues(q, max(1, limit), min_clue_cov=FRAGMENT_CLUE_COVERAGE_MIN)
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

    def match_shelf(self, phrase: str, limit: int = 5) -> list[tuple[str, float]]:
        """Shelf keys that a category phrase names, (key, score 0..100) best first (ties by key).
        Plurals are folded and each word is corrected to the closest shelf word (fuzz.ratio >= 80)
        before rapidfuzz token_set_ratio (70 %) + token_sort_ratio (30 %) against every shelf key."""
        if not isinstance(phrase, str) or not phrase.strip():
            return []
        exact = self.index.shelf_lower.get(" ".join(phrase.split()).lower())
        if exact is not None:
            return [(exact, 100.0)]
        if self._shelf_stemmed is None:
            stemmed = [" ".join(_stem(t) for t in tokens(_TSHIRT_RE.sub("tshirt", k)) if len(t) > 1)
                       for k in self.index.shelf_keys]
            self._shelf_words = sorted({w for s in stemmed for w in s.split()})
            self._shelf_stemmed = stemmed
        words = []
        for t in tokens(_TSHIRT_RE.sub("tshirt", phrase)):
            if len(t) < 2 or t in STOP:
                continue
            t = _stem(t)
            if len(t) >= FUZZY_MIN_LEN and t.isalpha() and t not in self._shelf_words:
                hit = process.extractOne(t, self._shelf_words, scorer=fuzz.ratio, score_cutoff=TOKEN_RATIO_MIN)
                if hit is not None:
                    t = hit[0]
            words.append(t)
        p = " ".join(words)
        if not p:
            return []
        hits = process.extract(p, self._shelf_stemmed, scorer=fuzz.token_set_ratio, score_cutoff=60,
                               limit=max(limit * 8, 40))
        out = []
        for _, sc, i in hits:
            s2 = fuzz.token_sort_ratio(p, self._shelf_stemmed[i])
            out.append((self.index.shelf_keys[i], round(0.7 * sc + 0.3 * s2, 4)))
        out.sort(key=lambda r: (-r[1], r[0]))
        return out[:limit]

    # ------------------------------------------------------------------ grounding
    def ground(self, proposals, raw_message: str) -> tuple[list[Grounded], list[Rejected]]:
        """Accept the traceable proposals; reject the rest with a reason.  Order is kept."""
        text = raw_message if isinstance(raw_message, str) else ("" if raw_message is None else str(raw_message))
        text = text[:4000]
        msg = _Message(text, self)
        accepted: list[Grounded] = []
        rejected: list[Rejected] = []
        seen: set[tuple[str, str, bool]] = set()
        for n, p in enumerate(list(proposals or [])):
            if not isinstance(p, Proposal):
                rejected.append(Rejected(str(getattr(p, "attribute", "")), str(getattr(p, "value", "")),
                                         str(getattr(p, "source", "")), "not a Proposal"))
                continue
            if n >= MAX_PROPOSALS:
                rejected.append(Rejected(str(p.attribute), str(p.value), str(p.source), "too many proposals"))
                continue
            res = self._ground_one(p, msg)
            if isinstance(res, Grounded):
                key = (res.attribute, " ".join(tokens(res.canonical or res.value)), res.negated)
                if key in seen:
                    rejected.append(Rejected(res.attribute, res.value, res.source,
                                             "duplicate of an accepted proposal"))
                    continue
                seen.add(key)
                accepted.append(res)
            else:
                rejected.append(res)
        return accepted, rejected

    def _ground_one(self, p: Proposal, msg: "_Message") -> Grounded | Rejected:
        source = p.source if isinstance(p.source, str) else ""
        attr = p.attribute.strip().lower() if isinstance(p.attribute, str) else ""
        raw_value = p.value if isinstance(p.value, str) else ""

        def reject(reason: str) -> Rejected:
            return Rejected(attr or str(p.attribute), raw_value, source or str(p.source), reason)

        if source not in SOURCES:
            return reject(f"unknown source {source!r}")
        if attr not in self.allowed:
            return reject("attribute not allowed")
        if not isinstance(p.value, str):
            return reject("value is not text")
        value = " ".join(raw_value.split())
        if not value:
            return reject("empty value")
        if len(value) > MAX_VALUE_CHARS:
            return reject("value too long")
        negated = bool(p.negated) if isinstance(p.negated, bool) else False
        exact_clue = value in self.index.clues
        why = hard_injection(value)
        if why and not (source == "template" and exact_clue and value in msg.text):
            return reject(why)
        why = soft_injection(value)
        if why and not exact_clue and not self._paraphrases_catalog_text(value):
            return reject(why)

        if attr == "budget":
            return self._ground_budget(p, attr, value, negated, source, msg, reject)
        # "not red" / "no leather" as a value: the shopper rejects it, whatever the flag said.
        cue = _LEADING_NEGATION_RE.match(value)
        if cue:
            negated = True

        vtoks = content_tokens(value)
        if not vtoks:
            return reject("no content words in value")
        # (2) the value is the shopper's own words
        found, cov, span, forms = msg.locate(vtoks)
        verbatim = source == "template" and value in msg.text
        if verbatim:
            cov = 1.0   # an official template's slot, quoted as it is
        if cov < VALUE_IN_MESSAGE_MIN:
            missing = [t for t, ok in zip(vtoks, found) if not ok]
            return reject(f"value not in the shopper's words (found {cov:.0%}; missing {', '.join(missing[:5])})")
        evidence = value if verbatim else msg.quote(span)
        canonical = _canonical(value[cue.end():] if cue else value, forms)
        # (3) the value maps to catalog vocabulary
        clue_matches: list[str] = []
        shelf_matches: list[str] = []
        cat_score = 0.0
        if exact_clue:
            clue_matches, cat_score = [value], 1.0
        vq = self._prepare(value)
        ranked = self._rank_clues(vq, 8, min_query_cov=VALUE_IN_CLUE_MIN)
        for clue, _score, _rec, prec, _span in ranked:
            if clue not in clue_matches and len(clue_matches) < 5:
                clue_matches.append(clue)
                cat_score = max(cat_score, prec)
        if attr == "category" or not clue_matches:
            shelves = self.match_shelf(value)
            shelf_matches = [k for k, s in shelves if s >= SHELF_MATCH_MIN]
            if shelf_matches:
                cat_score = max(cat_score, max(s for _, s in shelves) / 100.0)
        known_share, lex_share, shelf_share = self._vocab_shares(vq)
        if not clue_matches and not shelf_matches:
            if lex_share > 0 and known_share >= VALUE_IN_CLUE_MIN:
                cat_score = max(cat_score, known_share)
            elif shelf_share >= VALUE_IN_CLUE_MIN:
                cat_score = max(cat_score, shelf_share)
            else:
                return reject("no catalog vocabulary matches")
        confidence = round(min(1.0, cov) * min(1.0, cat_score) * SOURCE_TRUST[source], 4)
        return Grounded(attr, value, negated, source, confidence, evidence, clue_matches, canonical,
                        shelf_matches, None)

    def _ground_budget(self, p, attr, value, negated, source, msg, reject):
        b = parse_budget(value)
        if b is None:
            return reject("no parsable budget")
        if b.has_number:
            spans = []
            for x in b.numbers():
                sp = msg.number_span(x)
                if sp is None:
                    return reject(f"value not in the shopper's words (no {x:g} in the message)")
                spans.append(sp)
            evidence = msg.text[min(a for a, _ in spans):max(e for _, e in spans)]
            evidence = msg.widen(evidence, spans)
        else:
            sp = msg.price_cue_span(b.qualitative)
            if sp is None:
                return reject(f"value not in the shopper's words (no {b.qualitative}-price word in the message)")
            evidence = msg.widen(msg.text[sp[0]:sp[1]], [sp])
        conf = round((1.0 if b.has_number else 0.7) * SOURCE_TRUST[source], 4)
        return Grounded(attr, value, negated, source, conf, evidence, [], value, [], b)

    def _paraphrases_catalog_text(self, value: str) -> bool:
        """True when a value with an instruction word ("we recommend ordering a size up") is a
        paraphrase of a card value that says it too: >= 3 other content words, and one clue that
        contains the instruction word holds >= 80 % of the value's weight."""
        rest = content_tokens(SOFT_INSTRUCTION_RE.sub(" ", value))
        if len(rest) < 3:
            return False
        for clue, *_ in self._rank_clues(self._prepare(value), 8, min_query_cov=0.8):
            if soft_injection(clue):
                return True
        return False

    def _vocab_shares(self, q: _Query) -> tuple[float, float, float]:
        """IDF-weighted shares of the query's words that are catalog words, lexicon words, shelf words."""
        tot = known = lex = shelf = 0.0
        for t, f in zip(q.toks, q.forms):
            w = min((self.idf(v) for v, _ in f), default=self.index.default_idf)
            tot += w
            if f:
                s = max(s for _, s in f)
                known += w * s
                if any(v in LEXICON for v, _ in f):
                    lex += w * s
                if any(v in self.index.shelf_vocab for v, _ in f):
                    shelf += w * s
        if tot <= 0:
            return 0.0, 0.0, 0.0
        return known / tot, lex / tot, shelf / tot


# ---------------------------------------------------------------------- helpers

class _Message:
    """The raw message, tokenised once, with fuzzy lookups for value tokens."""

    def __init__(self, text: str, gate: Gate) -> None:
        self.text = text
        self.gate = gate
        self.toks = tokens_with_spans(text)
        # Words inside ids, URLs and instruction clauses are not the shopper's words: blanked.
        hidden = _injection_token_positions(text, soft=False)
        words = ["" if i in hidden else t for i, (t, _, _) in enumerate(self.toks)]
        self.words = words
        # Adjacent pairs joined ("t shirt" ~ "tshirt", "v neck" ~ "vneck") also count as a word.
        self.joined = [(words[i] + words[i + 1], i) for i in range(len(words) - 1) if words[i] and words[i + 1]]
        self.word_set = {}
        for i, w in enumerate(words):
            if w:
                self.word_set.setdefault(w, i)

    def _find(self, vt: str) -> tuple[float, tuple[int, int] | None, str]:
        """(similarity 0..1, token index span, message spelling) of the best message word for value token vt."""
        i = self.word_set.get(vt)
        if i is not None:
            return 1.0, (i, i), vt
        for j_word, j in self.joined:
            if j_word == vt:
                return 1.0, (j, j + 1), vt
        if len(vt) < FUZZY_MIN_LEN or is_number(vt) or not self.words:
            return 0.0, None, vt
        cands = [w for w in self.words if len(w) >= FUZZY_MIN_LEN - 1 and not is_number(w)]
        best = None
        hit = process.extractOne(vt, cands, scorer=fuzz.ratio, score_cutoff=TOKEN_RATIO_MIN) if cands else None
        if hit is not None:
            best = (hit[1] / 100.0, (self.word_set[hit[0]], self.word_set[hit[0]]), hit[0])
        jc = [w for w, _ in self.joined]
        hit2 = process.extractOne(vt, jc, scorer=fuzz.ratio, score_cutoff=TOKEN_RATIO_MIN) if jc else None
        if hit2 is not None and (best is None or hit2[1] / 100.0 > best[0]):
            j = self.joined[hit2[2]][1]
            best = (hit2[1] / 100.0, (j, j + 1), hit2[0])
        if best is None:
            # Both misspelled differently: compare their catalog corrections.
            forms = {v for v, _ in self.gate.correct(vt)}
            if forms:
                for w in cands:
                    if forms & {v for v, _ in self.gate.correct(w)}:
                        k = self.word_set[w]
                        return 0.8, (k, k), w
            return 0.0, None, vt
        return best

    def locate(self, vtoks: list[str]):
        """Per value token: found?; IDF-weighted coverage; token span; (value token, catalog form) pairs."""
        found: list[bool] = []
        tot = got = 0.0
        lo, hi = None, None
        forms: list[tuple[str, str]] = []
        for vt in vtoks:
            f = self.gate.correct(vt)
            w = min((self.gate.idf(v) for v, _ in f), default=self.gate.index.default_idf)
            sim, span, said = self._find(vt)
            tot += w
            ok = sim > 0 and span is not None
            found.append(ok)
            if ok:
                got += w * sim
                lo = span[0] if lo is None else min(lo, span[0])
                hi = span[1] if hi is None else max(hi, span[1])
            # Canonical form: the catalog spelling of the value token (the common one for a rare typo).
            if f and f[-1][0] != vt:
                forms.append((vt, f[-1][0]))
        cov = got / tot if tot > 0 else 0.0
        return found, cov, (lo, hi) if lo is not None else None, forms

    def quote(self, span: tuple[int, int] | None) -> str:
        if span is None:
            return ""
        return self.text[self.toks[span[0]][1]:self.toks[span[1]][2]]

    def number_span(self, x: float) -> tuple[int, int] | None:
        for (t, a, b), w in zip(self.toks, self.words):
            if w and is_number(t) and float(t) == x:
                return a, b
        return None

    def price_cue_span(self, qualitative: str | None) -> tuple[int, int] | None:
        """Span of the clause that says the price is `qualitative` ("low" / "high")."""
        for m in re.finditer(r"[^,;.!?\n]+", self.text):
            clause = m.group()
            if qualitative_budget(clause) == qualitative:
                for (t, a, b), w in zip(self.toks, self.words):
                    if w and m.start() <= a < m.end() and t in PRICE_CUES:
                        return a, b
        return None

    def widen(self, evidence: str, spans: list[tuple[int, int]]) -> str:
        """The evidence with up to three words before it (e.g. "under $30", "not too pricey")."""
        a = min(s for s, _ in spans)
        b = max(e for _, e in spans)
        prev = [s for _, s, e in self.toks if e <= a][-3:]
        start = prev[0] if prev else a
        # Stop at a clause boundary.
        cut = max(self.text.rfind(ch, start, a) for ch in ",;.!?")
        if cut >= start:
            start = cut + 1
        return self.text[start:b].strip()


def _densest(pos: list[int], q: _Query, gate: Gate) -> tuple[int, int] | None:
    """The run of matched positions (gaps <= 3 tokens) with the most IDF weight."""
    if not pos:
        return None
    best = None
    run = [pos[0]]

    def weight(r):
        return sum(max((gate.idf(v) * s for v, s in q.forms[i]), default=0.0) for i in r)

    for p in pos[1:]:
        if p - run[-1] <= 3:
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


def _stem(tok: str) -> str:
    """Fold a plural: boots -> boot, dresses -> dress (enough for shelf names)."""
    if len(tok) > 4 and tok.endswith("es") and tok[-3] in "sxz":
        return tok[:-2]
    if len(tok) > 3 and tok.endswith("s") and not tok.endswith("ss"):
        return tok[:-1]
    return tok


def _form(forms: list[tuple[str, float]], raw: str, ctset: set[str]) -> str:
    for v, _ in forms:
        if v in ctset:
            return v
    return forms[0][0] if forms else raw


def _canonical(value: str, forms: list[tuple[str, str]]) -> str:
    """The value with each misspelled word replaced by its catalog spelling (case of the value kept)."""
    if not forms:
        return value
    out = value
    for bad, good in forms:
        out = re.sub(r"(?i)\b" + re.escape(bad) + r"\b", good, out)
    return out


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


def _injection_token_positions(text: str, soft: bool = True) -> set[int]:
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
