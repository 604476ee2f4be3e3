"""Every tunable of the agent and of its grounding gate, in one place.

The contest's own numbers (attributes, turn and list limits, score weights)
are rules, not tunables: they live in `contest.rules` and are imported here.
Each tunable carries one line on where its value comes from:
- "measured": chosen by runs on the public set AND the held-out panels (the
  figures are in evaluation_results/ or the closing note named);
- "hand-set": set when the rule was written, checked only in that the
  results table did not get worse; not swept.
"""
from __future__ import annotations

from dataclasses import dataclass

from contest.rules import ALLOWED_ATTRIBUTES, MAX_TURNS, TOP_K, W_EFF, W_HIT, W_MRR
from grounding.settings import GroundingTunables

__all__ = ["ALLOWED_ATTRIBUTES", "GROUNDING", "MAX_TURNS", "QUESTION_ATTRIBUTES", "TOP_K", "TUNABLES", "Tunables",
           "W_EFF", "W_HIT", "W_MRR"]

# Attributes a question may name.  `category` and `brand` never classify a card
# value (classify() has no such type), so asking them only ever yields "no
# additional preference": the question chooser still values them honestly.
QUESTION_ATTRIBUTES: tuple[str, ...] = (
    "other", "material", "color", "size", "style", "use_case", "feature", "budget",
)


@dataclass(frozen=True)
class Tunables:
    """Decision knobs of the agent."""

    # Prior over products: log-weight = prior_alpha * log1p(rating_number).
    # measured: 0.25 / 0.5 / 1.0 / 2.0 on public, popmatched, uniform (issue 3 note); 0.5 best overall.
    prior_alpha: float = 0.5
    # Soft evidence: log-likelihood penalty per unit of value mismatch.  hand-set.
    mismatch_beta: float = 9.0
    # Category evidence for a fuzzy (non-exact) shelf guess.  hand-set (catdamage / drop panels checked).
    shelf_beta: float = 4.0
    # Shelves considered when the category phrase is not an exact shelf key
    # (their products fill the pool up to max_pool), and the least score kept.  hand-set.
    fuzzy_shelves: int = 200
    fuzzy_shelf_min_score: float = 0.2
    # BM25 safety-net candidates added when nothing matches exactly.  hand-set.
    bm25_candidates: int = 200
    # Free text: weight of BM25 relevance (title, category path, card values)
    # as evidence.  hand-set on the para panel (commit c803cba).
    text_beta: float = 5.0
    # Free text whose best card-value similarity reaches this is read as quoted
    # values (card evidence), not as a description (text relevance).  hand-set.
    card_explained_sim: float = 0.8
    # A guessed shelf this sure is taken as named: its words are not text evidence.  hand-set.
    named_shelf_score: float = 0.8
    # Free-text replies: credit (x share of said words found on the product) for
    # answering with any of the product's words rather than the predicted values.  hand-set.
    any_value_credit: float = 0.7
    # BM25 hits read for free-text relevance.  hand-set.
    text_candidates: int = 2000
    # Largest candidate pool scored per turn (posterior tail is cut, ties by id).  hand-set.
    max_pool: int = 4000
    # From this turn on, show the list the horizon DP chooses even when a
    # question could still separate candidates (insurance).  hand-set.
    insurance_turn: int = 8
    # Log-weight paid by a candidate that does not explain every message
    # exactly when some candidate does (soft, so damaged wording can recover).
    # measured: drop / hideclue panels (issue 3 note).
    inexact_penalty: float = 8.0
    # Log-weight paid by a product shown on a turn that may not have counted
    # (scenario read from free text: it may be a pre-override turn).  hand-set.
    doubtful_penalty: float = 6.0
    # A question is asked only if worth more than this (TechnicalScore), and an
    # answer group counts as a real split only above this probability mass.  hand-set.
    min_question_value: float = 1e-4
    min_group_mass: float = 1e-3
    # Questions are valued over the best candidates covering this share of the
    # posterior, at most question_candidates of them (the far tail cannot change
    # which candidate tops an answer group).  hand-set; sessions identical to the full sum on public.
    question_mass_covered: float = 1.0 - 1e-5
    question_candidates: int = 1500
    # Opening similarity credited to the browsing hypothesis of free text: with a
    # browsing cue, and without one.  hand-set.
    browsing_sim_cued: float = 0.6
    browsing_sim_uncued: float = 0.3
    # Similarity of a no-preference reply when the candidate predicts values, and of
    # any reply when the candidate predicts none.  hand-set.
    no_preference_sim: float = 0.25
    no_values_sim: float = 0.1
    # Free-text soft facts: share of mismatch_beta paid for a negated word on the
    # product, and for a price over the budget ceiling x budget_slack.  hand-set.
    negation_penalty_share: float = 0.5
    over_budget_penalty_share: float = 0.3
    budget_slack: float = 1.1
    # Free text: a fragment match this good (0..100) brings its clue's products in,
    # unless the clue is on more than clue_products_max products.  hand-set.
    clue_match_min: float = 70.0
    clue_products_max: int = 400
    fragments_per_message: int = 8
    # A typo correction of a shopper's word joins the evidence from this similarity.  hand-set.
    correction_min_sim: float = 0.8
    # A model's "no preference" reading is kept only for replies of at most this many content words.  hand-set.
    no_preference_max_words: int = 3
    # BM25 column weights (title, category path, card values + store) and the query word cap.  hand-set.
    bm25_weights: tuple[float, float, float] = (6.0, 4.0, 2.0)
    bm25_max_words: int = 40
    # ---- people: free-text sessions that do not quote catalog values (starter/people/ranking.py) ----
    # A free-text opening whose best card-value similarity (over its bm25_candidates best BM25
    # matches) reaches this quotes values (the template path reads it); below it, and with no
    # shelf name spelled out, it is a person.  measured: persona cards 0/200 at 0.6; public para
    # 200/200, popmatched para 800/800, para+drop+catdamage 184/200.
    quoting_sim: float = 0.6
    # Full-text query: words kept, BM25 field weights (title, categories, features, details,
    # store, description), candidates read.  hand-set (reference agent's weights); 40 words bound
    # the cost of a word salad (bench_robustness) and never bind on the persona cards.
    people_max_words: int = 40
    # Words held by more than this share of the products are left out of a BM25 query (people and
    # template path alike): FTS5's BM25 gives them an IDF of 1e-6 (its floor for IDF <= 0, i.e.
    # df >= N/2): they add at most a millionth to a score but make the query visit most rows
    # ("women": 35,070 of 50,000 products, 25 of the 34 ms of "black leather ankle boots women under 80").
    common_word_share: float = 0.5
    people_field_weights: tuple[float, float, float, float, float, float] = (6.0, 4.0, 2.5, 2.5, 1.5, 1.0)
    # Candidates read: 500 measured tune 0.984150 / confirm 0.971375 against 0.982200 / 0.971375 at 2000.
    people_candidates: int = 500
    # Log-weight = text_beta x relevance (BM25 / best) + audience +- + prior_alpha x log1p(reviews)
    # - penalties.  measured on the persona cards, tune half then confirm half: audience 0.5 with
    # negation 1.0 gave 0.986750 / 0.980375 against 0.984150 / 0.971375 at 1.0 / 2.0; audience 2.0
    # and text_beta 4.0 lost on both halves (closing note of issues 8-11).
    people_text_beta: float = 5.0
    people_audience: float = 0.5
    people_prior_alpha: float = 0.2
    # Penalties: a product shown on an earlier turn (the session went on, so it was not the
    # target), a negated word on the product, and a price off the budget (per unit of log ratio).
    people_shown_penalty: float = 8.0
    people_negation_penalty: float = 1.0
    people_budget_penalty: float = 2.0
    # No budget penalty within this share over a cap (under a floor), nor for "around X" within
    # this band of ratios price / X.  hand-set ("around 50" keeps $53.99, drops $90).
    people_budget_slack: float = 0.1
    people_around_band: tuple[float, float] = (0.6, 1.25)
    # A brand the shopper names (a catalog store, `grounding.brands`): its products gain this
    # log-weight, and up to `people_brand_candidates` of them (most reviewed first) join the
    # candidates when the full-text query missed them (a misspelt name).  hand-set: both persona
    # halves and the second wording give the same sessions with it as without (BM25 over the store
    # field already finds a name spelt right); it serves misspelt names (tests/test_brands.py).
    people_brand: float = 1.0
    people_brand_candidates: int = 50
    # A people session answering "anything else?" with "no preference" is handed to the template
    # path (replayed) only while everything said holds at most this many content words: a used-up
    # template shopper says little (every hand-off of the perturbed panels and persona halves: 8-24
    # words, now 11 and 16), and the replay costs a turn of template work per message said: word
    # salads of 31-53 words handed off in 37-183 ms (10,000 fuzz messages, seed 11; at 60 words).
    handoff_max_words: int = 30
    # Before this turn show only the best product while the shopper still has more to say.
    people_insurance_turn: int = 4
    # Memo sizes (entries) of a word's document frequency and its FTS5 terms (per table) and of a text's word set:
    # bounds on memory (unbounded, the word-set memo and the IDF-weight memo held 60,640 and 134,266
    # entries after 2,000 mixed sessions and RSS still grew: bench_robustness at 9f353eb); a memo
    # saves microseconds a lookup, so they stop adding when full.  The card-value word memo keeps the
    # most recently used instead (`starter.index.memo.RecentMemo`, up to twice this many): at a million
    # products a full memo that stopped adding missed on most values of every turn.
    df_cache_entries: int = 50_000
    token_set_cache_entries: int = 50_000
    # Memo of the IDF weight of a word set, emptied when it holds this many: its keys are frozensets,
    # which the garbage collector walks word by word on every full collection (42,000 keys made
    # each one about 105 ms longer, paid by whichever turn it fell in).  4,096 keys cost ~10 ms.
    weight_memo_entries: int = 4096
    # Memo of each product's word set (title + card values): a bound for catalogs far larger than
    # the proxy (2,000 mixed sessions touched 49,061 of its 50,000 products).
    product_tokens_cache_entries: int = 100_000
    # BM25 engine: "arrays" scores FTS5's ranking from memoised posting arrays (starter/index/postings.py;
    # the same floats, so the same lists; a query it cannot reproduce exactly goes to SQL), "sqlite"
    # asks FTS5 every time.  The arrays hold at most this many postings (12 bytes each: ~50 MB).
    bm25_engine: str = "arrays"
    posting_cache_entries: int = 4_000_000
    # Postings read for one query, in rows (a word's document frequency), as a share of the catalog's
    # rows: past it, SQL answers and the words that fit are read for later turns (a cold
    # 4,000-character salad read 40 common words' postings: 265 ms against ~100 ms for its SQL
    # query).  Reading a cold query's words costs 1-2x its SQL query at 50,000 rows, and SQL plus a
    # partial read costs more: the confirm half in fresh processes had p95 82 ms at 25,000 rows and
    # 44 ms at 100,000 in one run (bench_turn --base), the same sessions.  The SQL query's cost
    # grows faster with the catalog than reading does, hence a share: at 250,000 rows the confirm
    # half's 200 opening queries took 162-166 ms each by SQL and 66-76 ms from arrays, reads
    # included, with every query read (2x); a fixed 100,000 rows left 129 of them to SQL.  measured.
    posting_load_share: float = 2.0
    # A message with more content words than this is compared with card values through the values'
    # words, not by a substring scan per word (rank._may_share): the same answer either way, but a
    # 300-word salad scanned 8,000 values word by word (about 50 ms a turn).  measured.  The same
    # bound lets `CatalogIndex.holds_any` check a product not yet tokenised by substring first.
    substring_scan_max_words: int = 8
    # After the index is built, move every object then alive out of the cyclic garbage collector's
    # generations (`gc.freeze`): a full collection in a turn then skips the index.  A process
    # setting, not a quality knob; off only for a host that manages its own collector.
    freeze_after_build: bool = True
    # With it, the collector's third threshold is raised to at least this (Python's default is 10:
    # a full collection after every 10 middle-generation ones).  Live sessions hold thousands of
    # tracks, which each full collection walks (~60 ms); over 2,500 fuzz messages full collections
    # fell from 54 to 5 and turns over 200 ms from 43 to 33, at the same peak RSS.  A process setting.
    full_collection_threshold: int = 100
    # Per catalog field: at most this many characters of a text (and a hundredth as many list
    # items) are read.  A bound, not a tunable: the proxy's longest field is far shorter.
    max_field_chars: int = 100_000
    # A cold build parses a catalog file of at least `build_parallel_min_bytes` in this many forked
    # worker processes (starter/index/catalog_rows.py; 1 = in the building process); smaller files are
    # read serially (a worker costs a fork and its share of the pickled rows).  The same index either way.
    build_processes: int = 2
    build_parallel_min_bytes: int = 8_000_000
    # FTS5 holds this many bytes of pending index data before it writes a segment (its 'hashsize';
    # SQLite's default is 1 MB): a cold build writes fewer, larger segments and merges less.  The
    # index holds the same rows and BM25 gives the same scores.  Measured, inserting the FTS5 rows
    # alone: 2.7 -> 2.2 s on the proxy, 26.4 -> 16.3 s at 250k rows; 360 queries as fast (8.1 s).
    fts_hash_bytes: int = 16 * 1024 * 1024
    # Rerank (RERANK_METHOD): only candidates within this many nats of the best are touched.
    # measured: evaluation_results/rerank.md (off by default).
    rerank_window: float = 1.5


TUNABLES = Tunables()

GROUNDING = GroundingTunables(
    token_ratio_min=80.0,              # hand-set; bench_grounding.py: typo recall 1.0 at this cut
    fuzzy_min_len=4,                   # hand-set
    value_in_message_min=0.60,         # hand-set; bench_grounding.py top-3 recall 0.955 with a word dropped
    value_in_clue_min=0.60,            # hand-set (same bench)
    shelf_match_min=80.0,              # hand-set
    fragment_clue_coverage_min=0.5,    # hand-set
    shortlist=60,                      # hand-set; recall unchanged from 40 to 100 on the bench
    fragment_weights=(0.55, 0.30, 0.15),   # hand-set
    rare_postings=3,                   # hand-set
    max_proposals=40,                  # a bound, not a tunable of quality
    max_value_chars=200,               # a bound
    # A bound on the work of a turn: the agent reads at most this much of a message.  The longest
    # message of every run (public, panels, their perturbations, both persona halves) has 390
    # characters; a 4,000-character word salad cost 0.75 s of CPU (bench_robustness).
    max_message_chars=1000,
    correction_cache=50_000,           # a bound on memory
    shelf_word_ratio_min=85.0,         # hand-set (catdamage panel)
    source_trust=(("template", 1.0), ("regex", 0.95), ("llm", 0.9), ("fuzzy", 0.85)),   # hand-set; scales confidence only
    # Brands (grounding/brands.py), hand-set: on the misspelt-brand cards 22 of 23 and 21 of 22 names are
    # read as the target's store and none as another; none of the three card sets reads a wrong store.
    brand_max_words=4,
    brand_min_chars=4,                 # the proxy has a store "ON"
    brand_common_ratio=3.0,
    brand_fuzzy_min_chars=5,
    brand_fuzzy_long_chars=9,
)
