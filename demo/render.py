"""Terminal rendering of explained turns (shared by `demo.replay` and `demo.chat /why`)."""
from __future__ import annotations

import os
import shutil
import textwrap
from typing import TextIO

from demo.session import SessionResult, TurnView

BAR_WIDTH = 28


class Style:
    """Plain ANSI colours, or none at all."""

    CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34",
             "magenta": "35", "cyan": "36"}

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, *names: str) -> str:
        if not self.color or not names:
            return text
        codes = ";".join(self.CODES[n] for n in names)
        return f"\033[{codes}m{text}\033[0m"


def use_color(stream: TextIO, no_color: bool = False) -> bool:
    """Colour only on a terminal, and never with --no-color or NO_COLOR set."""
    if no_color or os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _width() -> int:
    return max(60, min(120, shutil.get_terminal_size((100, 24)).columns))


def _cut(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def bar(value: float, top: float, width: int = BAR_WIDTH) -> str:
    """A text bar of `value` against `top` (negative values draw nothing)."""
    if top <= 0 or value <= 0:
        return ""
    cells = value / top * width
    full = int(cells)
    return "█" * full + ("▌" if cells - full >= 0.5 else "")


def _rating(card: dict) -> str:
    r, n = card.get("average_rating"), card.get("rating_number")
    left = f"{r:.1f}★" if isinstance(r, (int, float)) else "–★"
    return f"{left} ({n:,})" if isinstance(n, int) else left


def render_products(products: list[dict], s: Style, width: int | None = None) -> list[str]:
    """A product a few lines: rank, the whole title (wrapped), price, rating, and its shelf."""
    width = width or _width()
    if not products:
        return ["    " + s("(no products shown)", "dim")]
    title_w = max(30, width - 36)
    lines = []
    for card in products:
        wrapped = textwrap.wrap(" ".join(str(card["title"]).split()), title_w) or [""]
        mark = s(" ◀ target", "green", "bold") if card.get("is_target") else ""
        first = wrapped[0].ljust(title_w)
        lines.append(f"  {card['rank']:>3}. {s(first, 'bold') if card.get('is_target') else first}"
                     f"  {card['price_text']:>10}  {_rating(card):>16}{mark}")
        lines += [f"       {w}" for w in wrapped[1:]]
        if card.get("category"):
            lines.append("       " + s(f"shelf: {card['category']}", "dim"))
    return lines


def render_explain(ex: dict, s: Style) -> list[str]:
    """The decision sections of one turn."""
    lines: list[str] = []
    if ex.get("fault"):
        lines.append("  " + s("fault: ", "red", "bold") + str(ex["fault"]))
    kind = ex.get("kind") or "?"
    parsed = ex.get("parsed") or {}
    extra = []
    if parsed.get("category"):
        extra.append(f"category={parsed['category']!r}")
    if parsed.get("value_text"):
        extra.append(f"values={_cut(parsed['value_text'], 70)!r}")
    if parsed.get("attribute"):
        extra.append(f"about={parsed['attribute']}")
    lines.append("  " + s("parsed", "cyan", "bold") + f"      {kind}" + (("  " + ", ".join(extra)) if extra else ""))
    model = ex.get("model")
    if model and model.get("called"):
        use = model.get("usage") or {}
        lines.append("  " + s("model", "cyan", "bold") + "       "
                     + (s("error: " + str(model["error"]), "red") if model.get("error")
                        else f"intent {model.get('intent') or '—'}, tokens {use.get('prompt_tokens', 0)}"
                             f"+{use.get('completion_tokens', 0)}"))
    if ex.get("understood"):
        lines.append("  " + s("understood", "cyan", "bold") + "  " + " · ".join(ex["understood"]))
    shelf = ex.get("shelf")
    if shelf:
        guesses = shelf.get("guesses") or {}
        top = ", ".join(f"{k} {v:.2f}" for k, v in list(guesses.items())[:3])
        lines.append("  " + s("shelf", "cyan", "bold") + f"       exact: {shelf.get('exact') or '—'}"
                     + (f"; guesses: {top}" if top else ""))
    lines += _constraints(ex, s)
    if ex["funnel"]:
        chain = " → ".join(f"{f['stage']} {s(format(f['count'], ','), 'bold')}" for f in ex["funnel"])
        lines.append("  " + s("funnel", "cyan", "bold") + "      " + chain)
    lines += _questions(ex, s)
    c = ex["commit"]
    if c.get("count") is not None:
        ev = f", expected value {c['expected_value']:.4f}" if isinstance(c.get("expected_value"), (int, float)) else ""
        lines.append("  " + s("commit", "cyan", "bold") + f"      show {c['count']}: {c.get('reason')}{ev}")
    return lines


def _constraints(ex: dict, s: Style) -> list[str]:
    """The accepted and the rejected constraints of a turn."""
    lines = ["  " + s("accepted", "cyan", "bold")]
    for c in ex["accepted"]:
        neg = "NOT " if c["negated"] else ""
        conf = f"{c['confidence']:.1f}" if isinstance(c["confidence"], (int, float)) else "?"
        lines.append(f"    {s('+', 'green')} {c['attribute']:<9} {neg}{_cut(c['value'], 70)}"
                     + s(f"  [{c['source']}, {conf}]", "dim"))
    if not ex["accepted"]:
        lines.append("    " + s("(none)", "dim"))
    lines.append("  " + s("rejected", "cyan", "bold"))
    for c in ex["rejected"]:
        lines.append(f"    {s('-', 'red')} {_cut(c['value'], 60)}" + s(f"  ({c['reason']})", "dim"))
    if not ex["rejected"]:
        lines.append("    " + s("(none)", "dim"))
    return lines


def _questions(ex: dict, s: Style) -> list[str]:
    """Each question's value, the one asked marked."""
    lines = ["  " + s("questions", "cyan", "bold") + "   value of asking (expected TechnicalScore gain)"]
    qs = ex["questions"]
    top = max((q["value"] for q in qs), default=0.0)
    for q in qs:
        chosen = q["attribute"] == ex.get("ask_attribute")
        name = f"{q['attribute']:<9}"
        n = q.get("groups")
        groups = "" if n is None else f"{n} distinct answer" + ("" if n == 1 else "s")
        b = bar(q["value"], top)
        lines.append(f"    {s(name, 'bold') if chosen else name} {s(b.ljust(BAR_WIDTH), 'yellow')}"
                     f" {q['value']:+.4f}  " + s(groups, "dim") + (s("  ← asked", "yellow", "bold") if chosen else ""))
    if not qs:
        lines.append("    " + s("(no question can separate the candidates)", "dim"))
    return lines


def render_turn(view: TurnView, s: Style, width: int | None = None) -> str:
    """A whole turn: message, decisions, reply, products, and a hit line if it is one."""
    width = width or _width()
    lines = [s(f"── turn {view.turn} " + "─" * max(0, width - 10 - len(str(view.turn))), "blue")]
    lines.append("  " + s("customer", "magenta", "bold") + f"    {view.customer}")
    lines.extend(render_explain(view.explain, s))
    ask = view.ask_attribute if view.ask_attribute is not None else "none"
    lat = f"  ({view.latency_ms:.1f} ms)" if isinstance(view.latency_ms, (int, float)) else ""
    lines.append("  " + s("agent", "magenta", "bold") + f"       {view.agent}" + s(f"  [ask: {ask}]{lat}", "dim"))
    lines.append("  " + s("products", "cyan", "bold"))
    lines.extend(render_products(view.products, s, width))
    if view.hit_rank is not None:
        lines.append("  " + s(f"HIT: target at rank {view.hit_rank} on turn {view.turn}", "green", "bold"))
    elif view.target_shown_uncounted:
        lines.append("  " + s("target listed, but before the intent override: it does not count", "yellow"))
    return "\n".join(lines)


def render_session(result: SessionResult, s: Style, width: int | None = None) -> str:
    width = width or _width()
    t = result.target
    head = [s("═" * width, "blue"),
            s(f"session {result.sample_id}", "bold") + f"  scenario {result.scenario_type}"
            + (f"  perturb {result.perturb}" if result.perturb != "none" else ""),
            f"target  {t['parent_asin']}  {_cut(t['title'], width - 30)}",
            f"        {t['price_text']}  {_rating(t)}  shelf {t['category']}",
            s("═" * width, "blue")]
    body = [render_turn(v, s, width) for v in result.turns]
    colour = ("green", "bold") if result.hit else ("red", "bold")
    tail = [s("═" * width, "blue"), s("outcome", "bold") + ": " + s(result.outcome_text, *colour)]
    return "\n".join(head + body + tail)
