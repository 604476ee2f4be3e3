"""The agent's settings: one small frozen dataclass per component, each read by that component alone.

The contest's own numbers (attributes, turn and list limits, score weights)
are rules, not settings: they live in `contest.rules`.  Every field carries one
line of provenance:
- "measured: <command> -> <figure>": chosen by runs on the public set and the
  held-out panels or persona halves; the runs are in `evaluation_results/`;
- "hand-set": set when the rule was written and checked only in that the
  results did not get worse; not swept;
- "bound": a limit on time or memory, not a knob of quality.
The history of how each value was reached is in
`evaluation_results/history/settings.md`.

`TUNE_<field>=<value>` overrides a field for a measurement run
(`settings_from_env`, used by `scripts.tuned_agent`); a field name is unique
across components unless two components read the same quantity, and then one
override sets both.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

from contest.rules import ALLOWED_ATTRIBUTES, MAX_TURNS, TOP_K, W_EFF, W_HIT, W_MRR
from grounding.settings import GroundingTunables

__all__ = ["ALLOWED_ATTRIBUTES", "MAX_TURNS", "QUESTION_ATTRIBUTES", "SETTINGS", "TOP_K", "W_EFF", "W_HIT", "W_MRR",
           "CommitSettings", "EvidenceSettings", "IndexSettings", "PeopleSettings", "PosteriorSettings",
           "ProcessSettings", "QuestionSettings", "RetrievalSettings", "Settings", "UnderstandingSettings",
           "settings_from_env"]

# Attributes a question may name.  `category` and `brand` never classify a card
# value (classify() has no such type), so asking them only ever yields "no
# additional preference": the question chooser still values them honestly.
QUESTION_ATTRIBUTES: tuple[str, ...] = (
    "other", "material", "color", "size", "style", "use_case", "feature", "budget",
)


@dataclass(frozen=True)
class IndexSettings:
    """The catalog index: its build, its BM25 queries, its popularity prior and its memos."""

    # Popularity prior per product: log-weight = prior_alpha * log1p(rating_number).
    # measured: TUNE_prior_alpha 0.25 / 0.5 / 1 / 2 on public, popmatched, uniform -> 0.5 best overall.
    prior_alpha: float = 0.5
    # Template BM25: column weights (title, category path, card values + store), words read.  hand-set.
    bm25_weights: tuple[float, float, float] = (6.0, 4.0, 2.0)
    bm25_max_words: int = 40
    # People full-text BM25: field weights (title, categories, features, details, store, description).
    # hand-set (the reference agent's weights).  40 words bound the cost of a word salad.
    people_field_weights: tuple[float, float, float, float, float, float] = (6.0, 4.0, 2.5, 2.5, 1.5, 1.0)
    people_max_words: int = 40
    # Words on more than this share of the products are left out of a BM25 query: FTS5 gives them an
    # IDF of 1e-6 (its floor for df >= N/2), so they change no ranking but make the query visit most rows.
    common_word_share: float = 0.5
    # "arrays" scores FTS5's bm25 from memoised posting arrays (the same floats); "sqlite" asks FTS5.  hand-set.
    bm25_engine: str = "arrays"
    # bound: postings held (12 bytes each, ~50 MB).
    posting_cache_entries: int = 4_000_000
    # bound: the people model's last summed queries kept to extend (each 8 bytes a product per field group).
    score_memo_entries: int = 8
    # bound: rowids the phrase memo holds (8 bytes each: 16 MB; a phrase in a fifth of the catalog holds 10,000).
    phrase_memo_rows: int = 2_000_000
    # Postings read for one query as a share of the catalog's rows; past it SQL answers.
    # measured: bench_turn on the persona confirm half at 25k / 100k / 250k rows -> 2.0 (reads 2x faster).
    posting_load_share: float = 2.0
    # bound: memo entries of a word's document frequency, of a text's word set, of IDF weights of a word
    # set (frozenset keys: the collector walks them), and of each product's word set.
    df_cache_entries: int = 50_000
    token_set_cache_entries: int = 50_000
    weight_memo_entries: int = 4096
    product_tokens_cache_entries: int = 100_000
    # A message with more content words than this is compared with card values through the values'
    # words instead of a substring scan per word (the same answer).  measured: bench_robustness fuzz tail.
    substring_scan_max_words: int = 8
    # bound: characters of a catalog text field read (a hundredth as many list items).
    max_field_chars: int = 100_000
    # A cold build parses a catalog file of at least build_parallel_min_bytes in this many forked
    # processes (the same index either way).  measured: bench_scale cold builds at 50k / 250k / 1M.
    build_processes: int = 2
    build_parallel_min_bytes: int = 8_000_000
    # FTS5 'hashsize': pending index data held before a segment is written (SQLite's default 1 MB).
    # measured: FTS5 inserts alone 2.7 -> 2.2 s on the proxy, 26.4 -> 16.3 s at 250k; the same index.
    fts_hash_bytes: int = 16 * 1024 * 1024


@dataclass(frozen=True)
class UnderstandingSettings:
    """Reading a free-text message: fuzzy clue fragments, typo corrections, the model's proposals."""

    # hand-set: fragments of a message matched against the clue index.
    fragments_per_message: int = 8
    # hand-set: a typo correction of a shopper's word joins the evidence from this similarity.
    correction_min_sim: float = 0.8
    # hand-set: a model's "no preference" reading is kept only for replies of at most this many content words.
    no_preference_max_words: int = 3
    # hand-set: a fragment match this good (0..100) names its clue (negations quoted from a clue, pool growth).
    clue_match_min: float = 70.0


@dataclass(frozen=True)
class RetrievalSettings:
    """The template path's candidate pool."""

    # hand-set (catdamage / drop panels checked): shelves considered for a category that is no exact
    # shelf key, and the least shelf score kept.
    fuzzy_shelves: int = 200
    fuzzy_shelf_min_score: float = 0.2
    # hand-set: BM25 safety-net candidates when nothing matches exactly.
    bm25_candidates: int = 200
    # hand-set: the largest pool scored a turn (posterior tail cut, ties by id).
    max_pool: int = 4000
    # hand-set: a fragment match this good brings its clue's products in, unless the clue is on more
    # than clue_products_max products.
    clue_match_min: float = 70.0
    clue_products_max: int = 400


@dataclass(frozen=True)
class EvidenceSettings:
    """The template path's evidence tracks: how well each candidate explains every message."""

    # hand-set: log-likelihood paid per unit of value mismatch.
    mismatch_beta: float = 9.0
    # hand-set (catdamage / drop panels checked): category evidence for a fuzzy shelf guess.
    shelf_beta: float = 4.0
    # hand-set on the para panel: weight of BM25 relevance of free text as evidence, and hits read.
    text_beta: float = 5.0
    text_candidates: int = 2000
    # hand-set: free text whose best card-value similarity reaches this is a quote of card values.
    card_explained_sim: float = 0.8
    # hand-set: a guessed shelf this sure is taken as named; its words are no text evidence.
    named_shelf_score: float = 0.8
    # hand-set: credit (x share of said words on the product) for a reply in any of the product's words.
    any_value_credit: float = 0.7
    # hand-set: opening similarity credited to the browsing hypothesis of free text, with and without a cue.
    browsing_sim_cued: float = 0.6
    browsing_sim_uncued: float = 0.3
    # hand-set: similarity of a no-preference reply when a candidate predicts values, and of any reply
    # when it predicts none.
    no_preference_sim: float = 0.25
    no_values_sim: float = 0.1
    # hand-set: share of mismatch_beta paid for a negated word on the product, and for a price over the
    # budget ceiling x budget_slack.
    negation_penalty_share: float = 0.5
    over_budget_penalty_share: float = 0.3
    budget_slack: float = 1.1


@dataclass(frozen=True)
class PosteriorSettings:
    """The template path's ranking: prior x evidence, with soft penalties."""

    # measured: drop / hideclue panels -> 8.0.  Paid by a candidate that does not explain every message
    # exactly when some candidate does (soft, so damaged wording can recover).
    inexact_penalty: float = 8.0
    # hand-set: paid by a product shown on a turn that may not have counted (a possible pre-override turn).
    doubtful_penalty: float = 6.0


@dataclass(frozen=True)
class QuestionSettings:
    """The question chooser: each question valued by the answers every candidate would give."""

    # hand-set: a question is asked only if worth more than this (TechnicalScore), and an answer group
    # counts as a split only above this probability mass.
    min_question_value: float = 1e-4
    min_group_mass: float = 1e-3
    # hand-set (public sessions identical to the full sum): questions are valued over the best candidates
    # covering this share of the posterior, at most question_candidates of them.
    question_mass_covered: float = 1.0 - 1e-5
    question_candidates: int = 1500


@dataclass(frozen=True)
class CommitSettings:
    """How many products to show: the horizon DP, and the turns before which only the best is shown."""

    # hand-set: from this template turn on the DP's list is shown even when a question could still separate.
    insurance_turn: int = 8
    # measured with the fitted people model on the eight halves' recorded pools (`scripts.people_replay
    # score --insurance-turn N`; the evaluator gives the same figures): sum of the four tune halves
    # 3.7858 / 3.7872 / 3.7891 / 3.7763 at 6 / 7 / 8 / 9 (evaluation_results/people/readers_2026-12-05.md).
    # Before this people turn only the best is shown while the shopper still has more to say.
    people_insurance_turn: int = 8


@dataclass(frozen=True)
class PeopleSettings:
    """The people path: a person describing a product in their own words."""

    # measured: persona cards 0/200 read as quoting at 0.6; public para 200/200, popmatched para 800/800.
    # A free-text opening whose best card-value similarity reaches this quotes values (template path).
    quoting_sim: float = 0.6
    # hand-set: a shelf name spelled out in an opening (its words, in order, and the name itself) is a quote
    # of the catalog when the spelled name has at least this many characters ("top" is too short to tell).
    spelled_shelf_min_chars: int = 4
    # measured (TUNE_*, mean of the three tune halves with the fitted model): full-text candidates read
    # 500 -> 0.92781, 1000 -> 0.92757; the best title-and-category matches that join them when the
    # whole-text query ranks them lower (a shopper's noun outweighed by bullet words) 30 / 100 / 300 ->
    # 0.92831 / 0.92781 / 0.92645: within noise, so the values in use stay.
    people_candidates: int = 500
    people_type_candidates: int = 100
    # measured (recorded pools of every persona half, replayed with the fitted model; see
    # evaluation_results/people/fact_pool_2026-12-06.md): of the products that fit who it is for and a numeric
    # budget, the best this many by the whole text and by the title join the pool.
    people_fact_candidates: int = 100
    # The people model's weights are fitted, not set: starter/people/weights.json and the trees that correct
    # them, trees.json (scripts.fit_people).
    # hand-set: a product shown on an earlier turn (so not the target) pays this log-weight, more than the
    # trees' correction alone can move one candidate against another (the span of its leaves' sums, which
    # tests/test_correction.py checks against the committed trees after every refit), so it never comes
    # back first.  measured against 8.0 with the trees: every persona half the same session for
    # session but one wording2 session (0.9895 -> 0.9897).
    people_shown_penalty: float = 30.0
    # hand-set: no budget penalty within this share over a cap (under a floor), nor for "around X"
    # within this band of price / X.
    people_budget_slack: float = 0.1
    people_around_band: tuple[float, float] = (0.6, 1.25)
    # hand-set (the development cards hold too few misspelt store names to fit it; a name spelt right is
    # seen by BM25 over the store field): a store named with a slip gains this log-weight, and up to
    # people_brand_candidates of a named store's products join the pool.
    people_brand: float = 1.0
    people_brand_candidates: int = 50
    # measured: every hand-off of the perturbed panels and persona halves said 8-24 words; word salads of
    # 31-53 words took 37-183 ms to replay.  Hand-off to the template path only up to this many words.
    handoff_max_words: int = 30


@dataclass(frozen=True)
class RerankSettings:
    """The optional model or embedding rerank (RERANK_METHOD)."""

    # measured: evaluation_results/rerank.md (off by default).  Only candidates this near the best move.
    rerank_window: float = 1.5


@dataclass(frozen=True)
class ProcessSettings:
    """What a process that owns its interpreter (the evaluator, the web server) may do after the index is
    built: `gc.freeze` and a rarer full collection.  Not read by the agent's constructor."""

    # measured: bench_robustness 2,500 fuzz messages -> full collections 54 -> 5, turns over 200 ms 43 -> 33.
    full_collection_threshold: int = 100


@dataclass(frozen=True)
class Settings:
    """Every component's settings; a component receives its own part only."""

    index: IndexSettings = field(default_factory=IndexSettings)
    understanding: UnderstandingSettings = field(default_factory=UnderstandingSettings)
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    evidence: EvidenceSettings = field(default_factory=EvidenceSettings)
    posterior: PosteriorSettings = field(default_factory=PosteriorSettings)
    questions: QuestionSettings = field(default_factory=QuestionSettings)
    commit: CommitSettings = field(default_factory=CommitSettings)
    people: PeopleSettings = field(default_factory=PeopleSettings)
    rerank: RerankSettings = field(default_factory=RerankSettings)
    process: ProcessSettings = field(default_factory=ProcessSettings)


def settings_from_env(env: Mapping[str, str], base: Settings | None = None) -> Settings:
    """`base` with every `TUNE_<field>` of `env` applied (to each component that has the field); an
    unknown field is an error, so a typo never measures the default by mistake."""
    base = base or Settings()
    parts: dict[str, Any] = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
    for key, raw in sorted(env.items()):
        if not key.startswith("TUNE_"):
            continue
        name = key[len("TUNE_"):]
        hit = False
        for part, value in parts.items():
            kinds = {f.name: f for f in dataclasses.fields(value)}
            if name in kinds:
                default = getattr(value, name)
                parts[part] = dataclasses.replace(value, **{name: _parse(raw, default)})
                hit = True
        if not hit:
            raise ValueError(f"{key}: no setting is named {name!r}")
    return Settings(**parts)


def _parse(raw: str, default: Any) -> Any:
    if isinstance(default, tuple):
        return tuple(type(default[0])(x) for x in raw.split(","))
    return type(default)(raw)


SETTINGS = Settings()

GROUNDING = GroundingTunables(
    token_ratio_min=80.0,              # measured: scripts.bench_grounding -> typo recall 1.0 at this cut
    fuzzy_min_len=4,                   # hand-set
    value_in_message_min=0.60,         # measured: bench_grounding -> top-3 recall 0.955 with a word dropped
    value_in_clue_min=0.60,            # measured: the same bench
    shelf_match_min=80.0,              # hand-set
    fragment_clue_coverage_min=0.5,    # hand-set
    shortlist=60,                      # measured: bench_grounding recall unchanged from 40 to 100
    fragment_weights=(0.55, 0.30, 0.15),   # hand-set
    rare_postings=3,                   # hand-set
    max_proposals=40,                  # bound
    max_value_chars=200,               # bound
    max_message_chars=1000,            # bound: the longest message of every run has 390 characters
    correction_cache=50_000,           # bound
    shelf_word_ratio_min=85.0,         # hand-set (catdamage panel)
    source_trust=(("template", 1.0), ("regex", 0.95), ("llm", 0.9), ("fuzzy", 0.85)),   # hand-set
    # measured on the misspelt-brand cards: 22 of 23 names read as the target's store, none as another.
    brand_max_words=4,
    brand_min_chars=4,                 # hand-set: the proxy has a store "ON"
    brand_common_ratio=3.0,
    brand_fuzzy_min_chars=5,
    brand_fuzzy_long_chars=9,
)
