"""What a person's conversation says about the product beyond its words: who it is for, what it is not,
the budget and the brands named; and how far a price is off that budget."""
from __future__ import annotations

import math
from dataclasses import dataclass

from grounding.audience import shopper_audiences
from grounding.brands import BrandMention, BrandRejection
from grounding.budget import PRICE_CUES, Budget, names_price, parse_budget
from grounding.words import tokens
from starter.people.brands import Brands
from starter.reading.understand import Reading
from starter.settings import PeopleSettings


@dataclass(frozen=True)
class Facts:
    """What the whole conversation says about the product, beyond its words."""

    audiences: frozenset[str]
    negated: frozenset[str]
    budget: Budget | None
    brands: tuple[str, ...] = ()                        # catalog store names, in the order said
    misspelt: tuple[str, ...] = ()                      # of them, those named with a slip (BM25 cannot see them)
    brand_mentions: tuple[BrandMention, ...] = ()       # the latest message's, and its refusals
    brand_refusals: tuple[BrandRejection, ...] = ()


def conversation_facts(readings: list[Reading], brands: Brands | None = None) -> Facts:
    """Audiences named, negated words, the latest budget said, and the brands named."""
    audiences: set[str] = set()
    negated: set[str] = set()
    budget: Budget | None = None
    named: list[str] = []
    misspelt: list[str] = []
    mentions: list[BrandMention] = []
    refusals: list[BrandRejection] = []
    for r in readings:
        if r.template:
            continue
        if brands is not None:
            mentions, refusals = brands.read(r.text)
            named += [m.store for m in mentions if m.store not in named]
            misspelt += [m.store for m in mentions if m.source == "fuzzy" and m.store not in misspelt]
        audiences |= shopper_audiences(r.text)
        negated |= set(r.negated)
        if names_price(r.text) or set(tokens(r.text)) & PRICE_CUES:
            got = parse_budget(r.text)
            if got is not None:
                budget = got
    last_is_free = bool(readings) and not readings[-1].template
    return Facts(frozenset(audiences), frozenset(negated), budget, tuple(named), tuple(misspelt),
                 tuple(mentions) if last_is_free else (), tuple(refusals) if last_is_free else ())


def budget_penalty(price: float | None, budget: Budget | None, cfg: PeopleSettings) -> float:
    """How far a price is off the budget, as a log ratio (0 inside it; soft, never a cliff)."""
    if budget is None or price is None or price <= 0:
        return 0.0
    slack = cfg.people_budget_slack
    if budget.max_price is not None and price > budget.max_price * (1 + slack):
        return math.log(price / (budget.max_price * (1 + slack)))
    if budget.min_price is not None and price < budget.min_price * (1 - slack):
        return math.log(budget.min_price * (1 - slack) / price)
    if budget.around is not None:
        ratio = price / budget.around
        low, high = cfg.people_around_band
        if ratio > high or ratio < low:
            return abs(math.log(ratio))
    return 0.0


_AUDIENCE_LABEL = {"women": "women's", "men": "men's", "girls": "girls'", "boys": "boys'", "baby": "baby / toddler"}


def understood(readings: list[Reading], facts: Facts) -> tuple[str, ...]:
    """What the agent understood so far, in a shopper's words: "women's · black · leather · under $80"."""
    out = [_AUDIENCE_LABEL[a] for a in ("women", "men", "girls", "boys", "baby") if a in facts.audiences]
    out += list(facts.brands)
    for r in readings:
        if not r.template:
            out += [w for w in (*r.colors, *r.materials) if w not in out]
    b = facts.budget
    if b is not None:
        if b.max_price is not None and b.min_price is not None:
            out.append(f"${b.min_price:g}-${b.max_price:g}")
        elif b.max_price is not None:
            out.append(f"under ${b.max_price:g}")
        elif b.min_price is not None:
            out.append(f"over ${b.min_price:g}")
        elif b.around is not None:
            out.append(f"around ${b.around:g}")
        elif b.qualitative:
            out.append("not too pricey" if b.qualitative == "low" else "premium")
    out += [f"not {w}" for w in sorted(facts.negated)]
    return tuple(out)
