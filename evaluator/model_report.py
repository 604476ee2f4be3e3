"""The report of a real-model run (`scripts/real_model_run.py`): counts, comparisons, Markdown.

Pure functions over the plain records the script collects (no model, no agent):
per configuration `tally`, LLM off vs on `compare`, and `write_markdown`.
"""
from __future__ import annotations

import collections
import re
import statistics
from pathlib import Path
from typing import Any

import contest as P

ACCEPTANCE_DELTA = -0.005
_REASON_DETAIL = re.compile(r"\s*\((?:found|no) [^)]*\)\s*$")

def latency_stats(values: list[float]) -> dict:
    if not values:
        return {"median": 0.0, "p95": 0.0, "max": 0.0, "count": 0}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"median": round(statistics.median(ordered), 1), "p95": round(p95, 1),
            "max": round(ordered[-1], 1), "count": len(ordered)}


def reason_kind(reason: str) -> str:
    """A rejection reason without its per-value detail ("found 50%; missing x")."""
    return _REASON_DETAIL.sub("", str(reason or "")).strip() or "(none)"


def session_score(rec: dict) -> float:
    return P.summarize([{"hit": rec["hit"], "turn": rec["turn"], "rank": rec["rank"]}])["recommended_technical_score"]


def tally(run: dict) -> dict:
    """Every count of one configuration."""
    s = run["summary"]
    turns = [t for sess in run["sessions"] for t in sess["turns"]]
    llm_turns = [t for t in turns if t["llm_called"]]
    err = collections.Counter(t.get("llm_error_kind") or "other" for t in llm_turns if t["llm_error"])
    acc_src = collections.Counter(c["source"] for t in turns for c in t["accepted"])
    rej_src = collections.Counter(c["source"] for t in turns for c in t["rejected"])
    rej_reason = collections.Counter(reason_kind(c["reason"]) for t in turns for c in t["rejected"])
    rej_reason_llm = collections.Counter(reason_kind(c["reason"]) for t in turns for c in t["rejected"]
                                         if c["source"] == "llm")
    intents = collections.Counter(t["intent"] or "(none)" for t in llm_turns if not t["llm_error"])
    relabels = collections.Counter(f"{t['kind_before_model']} -> {t['kind']}" for t in turns
                                   if t["understood"] and t["kind_before_model"] and t["kind"] != t["kind_before_model"])
    all_lat = [t["latency_ms"] for t in turns if t["latency_ms"] is not None]
    llm_lat = [t["latency_ms"] for t in llm_turns if t["latency_ms"] is not None]
    other_lat = [t["latency_ms"] for t in turns if not t["llm_called"] and t["latency_ms"] is not None]
    usage_snap = {k: sum(int((t["usage"] or {}).get(k, 0) or 0) for t in turns)
                  for k in ("prompt_tokens", "completion_tokens")}
    return {
        "sample_count": s["sample_count"], "hit_rate_at_10": s["hit_rate_at_10"], "mrr": s["mrr"],
        "mttc": s["mttc"], "efficiency": s["efficiency"],
        "technical_score": s["recommended_technical_score"],
        "scenario_metrics": s["scenario_metrics"],
        "tokens": s["reported_token_usage"], "tokens_in_snapshots": usage_snap,
        "turns": len(turns), "understood_turns": sum(t["understood"] for t in turns),
        "llm_calls": len(llm_turns), "llm_errors": sum(err.values()),
        "llm_errors_by_kind": {k: err.get(k, 0) for k in ("timeout", "invalid", "connection", "http", "setup",
                                                          "other")},
        "intents": dict(intents.most_common()), "kind_relabels": dict(relabels.most_common()),
        "accepted_by_source": dict(sorted(acc_src.items())),
        "rejected_by_source": dict(sorted(rej_src.items())),
        "rejected_by_reason": dict(rej_reason.most_common()),
        "rejected_llm_by_reason": dict(rej_reason_llm.most_common()),
        "latency_ms_all_turns": latency_stats(all_lat),
        "latency_ms_llm_turns": latency_stats(llm_lat),
        "latency_ms_other_turns": latency_stats(other_lat),
        "faults": sum(1 for t in turns if t["fault"]),
    }


def subset_scores(sessions: list[dict]) -> dict:
    """The official metrics of the first sessions alone (each session is played on its own)."""
    s = P.summarize([{"hit": x["hit"], "turn": x["turn"], "rank": x["rank"]} for x in sessions])
    return {"sample_count": s["sample_count"], "hit_rate_at_10": s["hit_rate_at_10"], "mrr": s["mrr"],
            "mttc": s["mttc"], "technical_score": s["recommended_technical_score"],
            "prompt_tokens": sum(x["prompt_tokens"] for x in sessions),
            "completion_tokens": sum(x["completion_tokens"] for x in sessions),
            "llm_calls": sum(t["llm_called"] for x in sessions for t in x["turns"])}


def compare(off: dict, on: dict) -> dict:
    """Sessions whose score moved, and where the two runs first diverge."""
    by_id = {s["sample_id"]: s for s in off["sessions"]}
    better, worse, same = [], [], 0
    for s_on in on["sessions"]:
        s_off = by_id.get(s_on["sample_id"])
        if s_off is None:
            continue
        d = round(s_on["score"] - s_off["score"], 6)
        if d == 0:
            same += 1
            continue
        diverge = None
        for a, b in zip(s_off["turns"], s_on["turns"]):
            if a["recommendations"] != b["recommendations"] or a["ask_attribute"] != b["ask_attribute"] \
                    or a["kind"] != b["kind"]:
                diverge = {"turn": b["turn"], "message": b["message"],
                           "kind_off": a["kind"], "kind_on": b["kind"], "intent": b["intent"],
                           "llm_error": b["llm_error"],
                           "llm_accepted": [c for c in b["accepted"] if c["source"] == "llm"],
                           "accepted_off": a["accepted"], "accepted_on": b["accepted"],
                           "ask_off": a["ask_attribute"], "ask_on": b["ask_attribute"],
                           "target_rank_off": _rank(a["recommendations"], s_off["target"]),
                           "target_rank_on": _rank(b["recommendations"], s_on["target"])}
                break
        llm_accepted = [{"turn": t["turn"], **c} for t in s_on["turns"] for c in t["accepted"] if c["source"] == "llm"]
        item = {"sample_id": s_on["sample_id"], "scenario_type": s_on["scenario_type"], "delta": d,
                "off": {k: s_off[k] for k in ("hit", "turn", "rank", "score")},
                "on": {k: s_on[k] for k in ("hit", "turn", "rank", "score")},
                "first_divergence": diverge, "llm_accepted_all_turns": llm_accepted,
                "intents_on": [t["intent"] for t in s_on["turns"] if t["llm_called"]]}
        (better if d > 0 else worse).append(item)
    worse.sort(key=lambda x: x["delta"])
    better.sort(key=lambda x: -x["delta"])
    return {"better": better, "worse": worse, "same": same}


def _first_cause(item: dict) -> str:
    d = item.get("first_divergence") or {}
    if not d:
        return "no divergence found"
    if d.get("kind_off") != d.get("kind_on"):
        return f"kind re-labelled by the intent ({d.get('kind_off')} -> {d.get('kind_on')})"
    if d.get("llm_accepted"):
        return "a grounded model constraint changed the list or question"
    if d.get("llm_error"):
        return "a model error"
    return "other"


def _rank(recs: list[str], target: str) -> int | None:
    return recs.index(target) + 1 if target in recs else None


def rejected_examples(on: dict, n: int = 5) -> list[dict]:
    """Up to n rejected model proposals, one per reason first, with the message they came from."""
    pool = []
    for sess in on["sessions"]:
        for t in sess["turns"]:
            for c in t["rejected"]:
                if c["source"] == "llm":
                    pool.append({"sample_id": sess["sample_id"], "turn": t["turn"], "message": t["message"], **c})
    out, seen_reasons, seen_values = [], set(), set()
    for ex in pool:  # distinct reasons first
        r = reason_kind(ex["reason"])
        if r not in seen_reasons and ex["value"] not in seen_values:
            out.append(ex)
            seen_reasons.add(r)
            seen_values.add(ex["value"])
        if len(out) >= n:
            return out
    for ex in pool:
        if ex not in out and ex["value"] not in seen_values:
            out.append(ex)
            seen_values.add(ex["value"])
        if len(out) >= n:
            break
    return out


# ---------------------------------------------------------------------------- report
def _fmt_lat(lat: dict) -> str:
    return f"{lat['median']:.0f} / {lat['p95']:.0f} / {lat['max']:.0f}"


def _md_escape(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_markdown(report: dict, path: Path) -> None:
    m = report["meta"]
    L: list[str] = []
    L.append("# Real-model run: LLM off vs on, perturbed shopper")
    L.append("")
    L.append(f"- date: {m['date']} (wall time {m['wall_seconds'] / 60:.1f} min)")
    L.append(f"- model: {m['model']} via {m['backend']} at {m['base_url']} (server lists: {m['server_models']})")
    L.append(f"- server: {m['server_note']}")
    L.append(f"- LLM_TIMEOUT: {m['llm_timeout']} s ({m['timeout_note']})")
    cs, ce = m.get("code_start") or {}, m.get("code_end") or {}
    if cs:
        L.append(f"- code: {cs.get('head')} ({cs.get('subject')})"
                 + (f", uncommitted changes: {', '.join(cs['dirty'])}" if cs.get("dirty") else ", clean")
                 + (f"; NOTE: HEAD moved to {ce.get('head')} during the run (the process kept the code it "
                    "imported at start)" if ce and ce.get("head") != cs.get("head") else ""))
    if m.get("code_note"):
        L.append(f"- code: {m['code_note']}")
    if m.get("post_run_note"):
        L.append(f"- after the run: {m['post_run_note']}")
    L.append(f"- dataset: {m['dataset']} (first {m['sessions']} sessions), catalog: {m['catalog']}")
    L.append(f"- machine: {m['machine']}; load average (1/5/15 min) at start {m['load_start']}, at end {m['load_end']}"
             + (f"; {m['load_note']}" if m.get("load_note") else ""))
    L.append(f"- seeds: the perturbed shopper is seeded per sample id by the evaluator (`--drop-rate` "
             f"{m['drop_rate']}); the LLM-off runs are deterministic, the LLM-on runs are deterministic up to "
             "the server (temperature 0; on a loaded machine a slow reply can become a timeout)")
    L.append("")
    L.append("Commands:")
    L.append("")
    L.append("```bash")
    for c in m["commands"]:
        L.append(c)
    L.append("```")
    L.append("")
    L.append("## Scores, tokens, calls, latency")
    L.append("")
    L.append("TechnicalScore = 0.5 Hit@10 + 0.3 MRR + 0.2 Efficiency, from the evaluator's `build_summary`. "
             f"Acceptance: delta (on - off) >= {ACCEPTANCE_DELTA}. Tokens are the evaluator's counts (the `usage` "
             "of every response). Errors: timeout / invalid / connection. Latency: `respond` wall time per turn, "
             "ms, median / p95 / max, all turns and the turns that called the model.")
    L.append("")
    L.append("| perturb | LLM | n | Hit@10 | MRR | MTTC | TechnicalScore | delta | pass | prompt tok | completion tok "
             "| calls | errors (t/i/c) | latency all turns | latency model turns |")
    L.append("|---|---|---:|---:|---:|---:|---:|---:|:---:|---:|---:|---:|---:|---:|---:|")
    for mode, res in report["results"].items():
        off, on = res["off"]["tally"], res["on"]["tally"] if "on" in res else None
        for name, t in (("off", off), ("on", on)):
            if t is None:
                continue
            delta = "" if name == "off" else f"{res['delta']:+.6f}"
            ok = "" if name == "off" else ("yes" if res["pass"] else "**no**")
            e = t["llm_errors_by_kind"]
            L.append(f"| {mode} | {name} | {t['sample_count']} | {t['hit_rate_at_10']:.4f} | {t['mrr']:.6f} | "
                     f"{t['mttc']:.3f} | {t['technical_score']:.6f} | {delta} | {ok} | "
                     f"{t['tokens']['prompt_tokens']} | {t['tokens']['completion_tokens']} | {t['llm_calls']} | "
                     f"{t['llm_errors']} ({e['timeout']}/{e['invalid']}/{e['connection'] + e['http']}) | "
                     f"{_fmt_lat(t['latency_ms_all_turns'])} | "
                     f"{_fmt_lat(t['latency_ms_llm_turns']) if t['llm_calls'] else '-'} |")
    L.append("")
    subs = [(m_, r) for m_, r in report["results"].items() if "subset_delta" in r]
    if subs:
        n_sub = subs[0][1]["off"]["subset"]["sample_count"]
        L.append(f"The first {n_sub} sessions alone (the same sessions: each is played on its own):")
        L.append("")
        L.append("| perturb | LLM | n | Hit@10 | MRR | MTTC | TechnicalScore | delta | pass | prompt tok | completion tok "
                 "| calls |")
        L.append("|---|---|---:|---:|---:|---:|---:|---:|:---:|---:|---:|---:|")
        for mode, res in subs:
            for name in ("off", "on"):
                t = res[name]["subset"]
                delta = "" if name == "off" else f"{res['subset_delta']:+.6f}"
                ok = "" if name == "off" else ("yes" if res["subset_delta"] >= ACCEPTANCE_DELTA else "**no**")
                L.append(f"| {mode} | {name} | {t['sample_count']} | {t['hit_rate_at_10']:.4f} | {t['mrr']:.6f} | "
                         f"{t['mttc']:.3f} | {t['technical_score']:.6f} | {delta} | {ok} | {t['prompt_tokens']} | "
                         f"{t['completion_tokens']} | {t['llm_calls']} |")
        L.append("")
    L.append("| perturb | sessions better / worse / same with the model | turns | turns understood | model calls "
             "| intents returned | free-text kinds re-labelled by the intent |")
    L.append("|---|---|---:|---:|---:|---|---|")
    for mode, res in report["results"].items():
        if "on" not in res:
            continue
        t, c = res["on"]["tally"], res["comparison"]
        intents = ", ".join(f"{k} {v}" for k, v in t["intents"].items()) or "-"
        relabels = ", ".join(f"{k} {v}" for k, v in t["kind_relabels"].items()) or "none"
        L.append(f"| {mode} | {len(c['better'])} / {len(c['worse'])} / {c['same']} | {t['turns']} | "
                 f"{t['understood_turns']} | {t['llm_calls']} | {intents} | {relabels} |")
    L.append("")
    L.append("| perturb | LLM | agent construction s | wall s | load (1 min) mean / max | warm-up call |")
    L.append("|---|---|---:|---:|---|---|")
    for mode, res in report["results"].items():
        for name in ("off", "on"):
            if name not in res:
                continue
            r = res[name]
            w = r.get("warmup_call")
            wtxt = f"{w['latency_ms']:.0f} ms, error {w['error']}" if w else "-"
            L.append(f"| {mode} | {name} | {r['construct_seconds']} | {r['wall_seconds']} | "
                     f"{r['load1_mean']} / {r['load1_max']} | {wtxt} |")
    L.append("")
    L.append("## Constraints: accepted and rejected by source")
    L.append("")
    L.append("| perturb | LLM | accepted by source | rejected by source |")
    L.append("|---|---|---|---|")
    for mode, res in report["results"].items():
        for name in ("off", "on"):
            if name not in res:
                continue
            t = res[name]["tally"]
            acc = ", ".join(f"{k} {v}" for k, v in t["accepted_by_source"].items()) or "-"
            rej = ", ".join(f"{k} {v}" for k, v in t["rejected_by_source"].items()) or "-"
            L.append(f"| {mode} | {name} | {acc} | {rej} |")
    L.append("")
    L.append("## Rejection reasons (LLM on; per-value detail such as \"found 50%; missing x\" folded)")
    L.append("")
    modes = [m_ for m_ in report["results"] if "on" in report["results"][m_]]
    reasons = collections.Counter()
    for mode in modes:
        reasons.update(report["results"][mode]["on"]["tally"]["rejected_by_reason"])
    L.append("| reason | " + " | ".join(f"{m_} (all sources) | {m_} (llm)" for m_ in modes) + " |")
    L.append("|---|" + "---:|---:|" * len(modes))
    for reason, _ in reasons.most_common(12):
        cells = []
        for mode in modes:
            t = report["results"][mode]["on"]["tally"]
            cells += [str(t["rejected_by_reason"].get(reason, 0)), str(t["rejected_llm_by_reason"].get(reason, 0))]
        L.append(f"| {_md_escape(reason)} | " + " | ".join(cells) + " |")
    L.append("")
    L.append("### Five rejected model proposals")
    L.append("")
    L.append("| perturb | session, turn | message | proposal (attribute: value) | reason |")
    L.append("|---|---|---|---|---|")
    for ex in report["rejected_examples"]:
        L.append(f"| {ex['perturb']} | {ex['sample_id']} t{ex['turn']} | {_md_escape(ex['message'])[:160]} | "
                 f"{_md_escape(ex['attribute'])}: {_md_escape(ex['value'])} | {_md_escape(ex['reason'])} |")
    L.append("")
    L.append("## Sessions the model changed")
    L.append("")
    for mode in modes:
        res = report["results"][mode]
        worse = res["comparison"]["worse"]
        if not worse:
            continue
        causes = collections.Counter(_first_cause(w) for w in worse)
        relabelled = {x["sample_id"] for x in res["on"]["sessions"]
                      if any(t["kind_before_model"] and t["kind"] != t["kind_before_model"] for t in x["turns"])}
        worse_ids = {w["sample_id"] for w in worse}
        L.append(f"{mode}: {len(worse)} sessions worse, summing to {sum(w['delta'] for w in worse):+.4f} session "
                 f"scores (the run's delta x {res['on']['tally']['sample_count']}). First divergence from the "
                 "LLM-off run: " + ", ".join(f"{k} {v}" for k, v in causes.most_common()) + ". "
                 f"{len(worse_ids & relabelled)} of the {len(worse)} contain at least one free-text message whose "
                 f"kind the model's intent re-labelled; {len(relabelled - worse_ids)} sessions had a re-label and "
                 "still scored the same.")
        L.append("")
    any_changed = False
    for mode in modes:
        c = report["results"][mode]["comparison"]
        for group in ("worse", "better"):
            for item in c[group][:8]:
                any_changed = True
                d = item["first_divergence"] or {}
                acc = "; ".join(f"{a['attribute']}: {a['value']}" + (" (negated)" if a.get("negated") else "")
                                for a in d.get("llm_accepted") or []) or "none"
                L.append(f"- {mode} {group}: {item['sample_id']} ({item['scenario_type']}) "
                         f"score {item['off']['score']:.4f} -> {item['on']['score']:.4f} "
                         f"(hit turn {item['off']['turn']} rank {item['off']['rank']} -> "
                         f"turn {item['on']['turn']} rank {item['on']['rank']}). First divergence turn "
                         f"{d.get('turn')}: \"{_md_escape(d.get('message'))[:140]}\"; kind {d.get('kind_off')} -> "
                         f"{d.get('kind_on')}, intent {d.get('intent')}, model error {d.get('llm_error')}, "
                         f"model constraints accepted: {acc}; ask {d.get('ask_off')} -> {d.get('ask_on')}; "
                         f"target rank on that turn {d.get('target_rank_off')} -> {d.get('target_rank_on')}.")
    if not any_changed:
        L.append("None: every session scored the same with the model on and off.")
    L.append("")
    if m.get("findings"):
        L.append("## Findings (read from the snapshots above)")
        L.append("")
        for f in m["findings"]:
            L.append(f"- {f}")
        L.append("")
    L.append(f"Every figure, per configuration and per session, is in `{report['meta']['json_name']}`.")
    path.write_text("\n".join(L) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------- main
