"""The grounding gate: the single place where text becomes a constraint.

Every proposal -- from the regexes, the model or fuzzy matching -- passes
`Gate.ground` before it may reach retrieval or ranking.  A proposal is
accepted only when it is traceable:

1. its attribute is one of the protocol's allowed attributes;
2. its value is the shopper's own words: every content token of the value is
   looked up among the message's tokens (exact, or a close `fuzz.ratio` for
   tokens of 4+ letters, so typos ground; numbers and short tokens must be
   exact), and the found tokens must carry enough of the value's IDF weight
   (so a dropped or mangled common word does not sink a value, while the rare
   word that identifies it must be there);
3. its value maps to catalog vocabulary: a clue string (exact, or a clue that
   holds most of the value's IDF weight after typo correction), a shelf, a
   material / colour word, or -- for `budget` only -- a parsable budget (a
   number, or a qualitative "cheap" / "not too pricey" when the message has a
   price word);
4. it is not an id, a URL or an instruction (`B0XXXXXXXX`, "ignore previous instructions", "system: ...",
   "recommend ..."), even when the shopper typed it.  The one exemption: a value taken from an official
   template message (source "template") that is verbatim a catalog card value -- 16 real card values name an
   ASIN and hundreds say "recommend" or "ignore".

Everything else is returned as `Rejected` with a specific reason (thresholds: `GroundingTunables`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from contest.rules import ALLOWED_ATTRIBUTES
from grounding.budget import AMOUNT_WORDS, PRICE_CUES, Budget, parse_budget, qualitative_budget
from grounding.changes import says_a_change
from grounding.clues import ClueIndex, FragmentMatches, injection_token_positions
from grounding.injection import SOFT_INSTRUCTION_RE, hard_injection, soft_injection
from grounding.negation import NEGATION_RE
from grounding.person_words import PEOPLE_STOP
from grounding.settings import GroundingTunables
from grounding.shelves import ShelfMatcher
from grounding.slips import slip_meant
from grounding.vocabulary import Vocabulary
from grounding.words import LEADING_NEGATION_RE, content_tokens, is_number, tokens, tokens_with_spans

SOURCES: tuple[str, ...] = ("template", "regex", "llm", "fuzzy")

# Hand-set, where they are read (never swept):
CLUE_CANDIDATES = 8            # clues ranked against a proposed value
CLUE_MATCHES_KEPT = 5          # of them, kept as the value's catalog matches
PARAPHRASE_MIN_WORDS = 3       # content words besides an instruction word for a value to be a paraphrase
PARAPHRASE_CLUE_COVERAGE = 0.8  # share of the value's weight one instruction-bearing clue must hold


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


class Gate:
    """Grounds proposals and matches fragments and shelves against one catalog (`english`: words never slips)."""

    def __init__(self, vocab: Vocabulary, tunables: GroundingTunables, english: frozenset[str] = frozenset()) -> None:
        self.catalog = vocab
        self.english = english
        self.text_df = getattr(vocab, "text_df", None)      # optional (`grounding.vocabulary`): words of its text
        self.cfg = tunables
        self.allowed = frozenset(ALLOWED_ATTRIBUTES)
        self.trust = dict(tunables.source_trust)
        self.shelves = ShelfMatcher(vocab.shelf_sizes, tunables.shelf_word_ratio_min, tunables.fuzzy_min_len)
        self.clues = ClueIndex(vocab, self.shelves.vocab, tunables)

    def correct(self, tok: str) -> tuple[tuple[str, float], ...]:
        """Catalog spellings of a word (see `ClueIndex.correct`)."""
        return self.clues.correct(tok)

    def slip_of(self, tok: str, min_ratio: float) -> str | None:
        """The catalog word an unknown word is a slip of (`ClueIndex.slip_of`), if a person meant it (`slip_meant`)."""
        meant = None if self.knows(tok) else self.clues.slip_of(tok, min_ratio)
        return None if meant is None else slip_meant(tok, meant, self.english, self.text_df)

    def knows(self, tok: str) -> bool:
        """A catalog word, a stop or conversation word, a number word: typed on purpose, never a slip."""
        return tok in self.clues.vocab or tok in PEOPLE_STOP or tok in AMOUNT_WORDS

    def match_fragments(self, raw_message: str, limit: int = 10) -> FragmentMatches:
        """Clue strings that fragments of the message refer to (see `ClueIndex.match_fragments`)."""
        return self.clues.match_fragments(raw_message, limit)

    def match_shelf(self, phrase: str, limit: int = 5) -> list[tuple[str, float]]:
        """Shelf keys that a category phrase names, (key, score 0..100) best first."""
        return self.shelves.match(phrase, limit)

    # ------------------------------------------------------------------ grounding
    def ground(self, proposals, raw_message: str) -> tuple[list[Grounded], list[Rejected]]:
        """Accept the traceable proposals; reject the rest with a reason.  Order is kept."""
        text = raw_message if isinstance(raw_message, str) else ("" if raw_message is None else str(raw_message))
        text = text[:self.cfg.max_message_chars]
        msg = _Message(text, self)
        accepted: list[Grounded] = []
        rejected: list[Rejected] = []
        seen: set[tuple[str, str, bool]] = set()
        for n, p in enumerate(list(proposals or [])):
            if not isinstance(p, Proposal):
                rejected.append(Rejected(str(getattr(p, "attribute", "")), str(getattr(p, "value", "")),
                                         str(getattr(p, "source", "")), "not a Proposal"))
                continue
            if n >= self.cfg.max_proposals:
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
        if len(value) > self.cfg.max_value_chars:
            return reject("value too long")
        negated = bool(p.negated) if isinstance(p.negated, bool) else False
        exact_clue = value in self.catalog.clues
        why = hard_injection(value)
        if why and not (source == "template" and exact_clue and value in msg.text):
            return reject(why)
        why = soft_injection(value)
        if why and not exact_clue and not self._paraphrases_catalog_text(value):
            return reject(why)

        if attr == "budget":
            return self._ground_budget(p, attr, value, negated, source, msg, reject)
        # "not red" / "no leather" as a value: the shopper rejects it, whatever the flag said.
        cue = LEADING_NEGATION_RE.match(value)
        if cue:
            negated = True
        elif negated and source == "llm" and not _says_a_negation(msg.text):
            return reject("negation not in the shopper's words")     # refused, not flipped

        vtoks = content_tokens(value)
        if not vtoks:
            return reject("no content words in value")
        # (2) the value is the shopper's own words
        found, cov, span, forms = msg.locate(vtoks)
        verbatim = source == "template" and value in msg.text
        if verbatim:
            cov = 1.0   # an official template's slot, quoted as it is
        if cov < self.cfg.value_in_message_min:
            missing = [t for t, ok in zip(vtoks, found) if not ok]
            return reject(f"value not in the shopper's words (found {cov:.0%}; missing {', '.join(missing[:5])})")
        evidence = value if verbatim else msg.quote(span)
        canonical = _canonical(value[cue.end():] if cue else value, forms)
        # (3) the value maps to catalog vocabulary
        matched = self._catalog_matches(attr, value, exact_clue)
        if matched is None:
            return reject("no catalog vocabulary matches")
        clue_matches, shelf_matches, cat_score = matched
        confidence = round(min(1.0, cov) * min(1.0, cat_score) * self.trust[source], 4)
        return Grounded(attr, value, negated, source, confidence, evidence, clue_matches, canonical,
                        shelf_matches, None)

    def _catalog_matches(self, attr: str, value: str, exact_clue: bool
                         ) -> tuple[list[str], list[str], float] | None:
        """The clues and shelves a value names, and how well (None: no catalog vocabulary matches)."""
        clue_matches: list[str] = []
        shelf_matches: list[str] = []
        cat_score = 0.0
        if exact_clue:
            clue_matches, cat_score = [value], 1.0
        vq = self.clues.prepare(value)
        ranked = self.clues.rank_clues(vq, CLUE_CANDIDATES, min_query_cov=self.cfg.value_in_clue_min)
        for clue, _score, _rec, prec, _span in ranked:
            if clue not in clue_matches and len(clue_matches) < CLUE_MATCHES_KEPT:
                clue_matches.append(clue)
                cat_score = max(cat_score, prec)
        if attr == "category" or not clue_matches:
            shelves = self.match_shelf(value)
            shelf_matches = [k for k, s in shelves if s >= self.cfg.shelf_match_min]
            if shelf_matches:
                cat_score = max(cat_score, max(s for _, s in shelves) / 100.0)
        known_share, lex_share, shelf_share = self.clues.vocab_shares(vq)
        if not clue_matches and not shelf_matches:
            if lex_share > 0 and known_share >= self.cfg.value_in_clue_min:
                cat_score = max(cat_score, known_share)
            elif shelf_share >= self.cfg.value_in_clue_min:
                cat_score = max(cat_score, shelf_share)
            else:
                return None
        return clue_matches, shelf_matches, cat_score

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
        conf = round((1.0 if b.has_number else 0.7) * self.trust[source], 4)
        return Grounded(attr, value, negated, source, conf, evidence, [], value, [], b)

    def _paraphrases_catalog_text(self, value: str) -> bool:
        """True when a value with an instruction word ("we recommend ordering a size up") is a
        paraphrase of a card value that says it too: >= PARAPHRASE_MIN_WORDS other content words, and one
        clue that contains the instruction word holds >= PARAPHRASE_CLUE_COVERAGE of the value's weight."""
        rest = content_tokens(SOFT_INSTRUCTION_RE.sub(" ", value))
        if len(rest) < PARAPHRASE_MIN_WORDS:
            return False
        for clue, *_ in self.clues.rank_clues(self.clues.prepare(value), CLUE_CANDIDATES,
                                              min_query_cov=PARAPHRASE_CLUE_COVERAGE):
            if soft_injection(clue):
                return True
        return False


# ---------------------------------------------------------------------- helpers

class _Message:
    """The raw message, tokenised once, with fuzzy lookups for value tokens."""

    def __init__(self, text: str, gate: Gate) -> None:
        self.text = text
        self.gate = gate
        self.toks = tokens_with_spans(text)
        # Words inside ids, URLs and instruction clauses are not the shopper's words: blanked.
        hidden = injection_token_positions(text, soft=False)
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
        if len(vt) < self.gate.cfg.fuzzy_min_len or is_number(vt) or not self.words:
            return 0.0, None, vt
        cands = [w for w in self.words if len(w) >= self.gate.cfg.fuzzy_min_len - 1 and not is_number(w)]
        best = None
        hit = process.extractOne(vt, cands, scorer=fuzz.ratio, score_cutoff=self.gate.cfg.token_ratio_min) if cands else None
        if hit is not None:
            best = (hit[1] / 100.0, (self.word_set[hit[0]], self.word_set[hit[0]]), hit[0])
        jc = [w for w, _ in self.joined]
        hit2 = process.extractOne(vt, jc, scorer=fuzz.ratio, score_cutoff=self.gate.cfg.token_ratio_min) if jc else None
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
            w = min((self.gate.clues.idf(v) for v, _ in f), default=self.gate.catalog.default_idf)
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


def _canonical(value: str, forms: list[tuple[str, str]]) -> str:
    """The value with each misspelled word replaced by its catalog spelling (case of the value kept)."""
    if not forms:
        return value
    out = value
    for bad, good in forms:
        out = re.sub(r"(?i)\b" + re.escape(bad) + r"\b", good, out)
    return out


def _says_a_negation(text: str) -> bool:
    """Whether a message rules something out ("no leather", "I don't want heels") or takes something back
    ("actually", "I meant"): the evidence a model's negated proposal needs, grounded like its value ("shirt for
    my mom" proposed as "not shirt" is refused).  The deterministic readers' negations carry their own cue."""
    return bool(NEGATION_RE.search(text.lower())) or says_a_change(text)
