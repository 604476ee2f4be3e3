"""Reading a response and scoring a run (PROTOCOL.md "Loop and scoring", "Subtleties")."""
from __future__ import annotations

from typing import Any

from contest.rules import MISS_TURN, TOP_K, W_EFF, W_HIT, W_MRR


def normalize_recommendations(recs: Any, catalog_ids: set[str] | dict, top_k: int = TOP_K) -> list[str]:
    """The first `top_k` unique catalog ids of a response's recommendations."""
    if not isinstance(recs, list):
        return []
    out: list[str] = []
    seen: set[str] = set()
    for item in recs:
        if isinstance(item, dict):
            raw = item.get("parent_asin")
            if raw is None:
                continue
        else:
            raw = item
        try:
            pid = str(raw).strip()
        except Exception:
            continue
        if not pid or pid in seen or pid not in catalog_ids:
            continue
        seen.add(pid)
        out.append(pid)
        if len(out) >= top_k:
            break
    return out


def valid_response(resp: Any) -> bool:
    """A dict whose `message` is a str; anything else counts as an empty response."""
    return isinstance(resp, dict) and isinstance(resp.get("message"), str)


def token_counts(resp: dict) -> tuple[int, int]:
    """(prompt, completion) tokens, each counted only if a non-negative int."""
    usage = resp.get("usage") if isinstance(resp, dict) else None
    if not isinstance(usage, dict):
        return 0, 0
    counts = []
    for key in ("prompt_tokens", "completion_tokens"):
        v = usage.get(key)
        counts.append(int(v) if isinstance(v, int) and v >= 0 else 0)
    return counts[0], counts[1]


def summarize(results: list[dict]) -> dict:
    """Hit rate, MRR, MTTC, efficiency and score with the official rounding."""
    n = len(results)
    if n == 0:
        return {"sample_count": 0, "hit_rate_at_10": 0.0, "mrr": 0.0, "mttc": float(MISS_TURN),
                "efficiency": 0.0, "recommended_technical_score": 0.0}
    hits = sum(1 for r in results if r["hit"])
    hit_rate = round(hits / n, 6)
    mrr = round(sum(1.0 / r["rank"] for r in results if r["hit"]) / n, 6)
    mttc = round(sum(r["turn"] if r["hit"] else MISS_TURN for r in results) / n, 6)
    efficiency = round(min(1.0, max(0.0, (MISS_TURN - mttc) / 10)), 6)
    score = round(W_HIT * hit_rate + W_MRR * mrr + W_EFF * efficiency, 6)
    return {"sample_count": n, "hit_rate_at_10": hit_rate, "mrr": mrr, "mttc": mttc,
            "efficiency": efficiency, "recommended_technical_score": score}
