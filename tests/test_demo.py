"""The demos: replay (against the evaluator), chat over piped stdin, the web API, the plots."""
from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from demo_support import IMG_TITLE, XSS_TITLE, evaluator_record, start_web, write_catalog

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "techjam"
SUBSET = SHARED / "catalog_subset.jsonl"     # the 200 public targets + 1,000 real rows: builds in < 1 s
PUBLIC = SHARED / "public_set.jsonl"
ANSI = re.compile(r"\x1b\[")
needs_public = pytest.mark.skipif(not (SUBSET.is_file() and PUBLIC.is_file()),
                                  reason="shared/techjam public set and catalog subset not present")


def _env() -> dict:
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env["PYTHONPATH"] = str(ROOT)
    return env


# ---- replay -------------------------------------------------------------------------------------
@needs_public
def test_replay_prints_every_section_and_the_evaluators_outcome():
    proc = subprocess.run([sys.executable, "-m", "demo.replay", "--sample-id", "public_0099", "--catalog", str(SUBSET),
                           "--dataset", str(PUBLIC)], capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert not ANSI.search(out), "no colours when stdout is not a tty"
    rec = evaluator_record(SUBSET, PUBLIC, "public_0099")
    turns = len(rec["transcript"])
    assert len(re.findall(r"^── turn \d+ ", out, flags=re.M)) == turns
    for section in ("customer", "parsed", "accepted", "rejected", "funnel", "questions", "commit", "agent", "products"):
        assert len(re.findall(rf"^  {section}\b", out, flags=re.M)) == turns, section
    for t in rec["transcript"]:
        assert f"  customer    {t['customer']}" in out
    assert "exact-consistent" in out and "live (ranked)" in out
    assert "█" in out, "the question values are drawn as bars"
    if rec["hit"]:
        assert out.rstrip().endswith(f"outcome: hit at rank {rec['rank']} on turn {rec['turn']}")
        assert f"HIT: target at rank {rec['rank']} on turn {rec['turn']}" in out
        assert "◀ target" in out
    else:
        assert "outcome: miss" in out


@needs_public
def test_replay_json_and_perturbation_match_the_evaluator(capsys):
    from demo import replay

    assert replay.main(["--sample-id", "public_0007", "--catalog", str(SUBSET), "--dataset", str(PUBLIC),
                        "--perturb", "para", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rec = evaluator_record(SUBSET, PUBLIC, "public_0007", frozenset({"para"}))
    assert data["outcome"]["hit"] == rec["hit"] and data["outcome"]["turn"] == rec["turn"]
    assert data["outcome"]["rank"] == rec["rank"]
    assert [t["customer"] for t in data["turns"]] == [t["customer"] for t in rec["transcript"]]
    snap = data["snapshot"]
    assert snap["known"] is True and len(snap["turns"]) == len(rec["transcript"])
    for key in ("parsed", "accepted", "rejected", "funnel", "questions", "commit", "top"):
        assert key in snap["turns"][0], key
    assert [t["recommendations"] for t in snap["turns"]] == \
        [[p["parent_asin"] for p in t["products"]] for t in data["turns"]]


@needs_public
def test_replay_unknown_sample_is_a_clear_error(capsys):
    from demo import replay

    assert replay.main(["--sample-id", "public_9999", "--catalog", str(SUBSET), "--dataset", str(PUBLIC)]) == 2
    assert "unknown sample id: public_9999" in capsys.readouterr().err


def test_colour_only_on_a_tty_and_never_with_no_color(monkeypatch):
    from demo.render import Style, bar, use_color

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color(Tty()) is True
    assert use_color(Tty(), no_color=True) is False
    assert use_color(io.StringIO()) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color(Tty()) is False
    assert Style(True)("x", "red") == "\x1b[31mx\x1b[0m" and Style(False)("x", "red") == "x"
    assert bar(1.0, 1.0, 10) == "█" * 10 and bar(0.5, 1.0, 10) == "█" * 5 and bar(-1, 1.0) == ""


# ---- chat ------------------------------------------------------------------------------------------
def test_chat_over_piped_stdin(tmp_path):
    catalog, _, _ = write_catalog(tmp_path)
    lines = ["I'm looking for Active Pants Sweatpants, but I'm still exploring.", "/why",
             "For that, what matters is: wool.", "/reset", "/why", "/nonsense",
             "I'm looking for Fashion Sneakers Running Sneakers, but I'm still exploring.", "/quit",
             "never read"]
    proc = subprocess.run([sys.executable, "-m", "demo.chat", "--catalog", str(catalog)], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert not ANSI.search(out)
    assert "agent (turn 1)> " in out and "agent (turn 2)> " in out
    assert XSS_TITLE in out                     # the most popular sweatpants, shown as plain text
    why = out.split("why turn 1:")[1].split("you> For that")[0]
    for section in ("parsed", "accepted", "rejected", "funnel", "questions", "commit"):
        assert f"  {section}" in why, section
    assert "open_browsing" in why
    assert "(new session)" in out and "nothing to explain yet" in out
    assert "unknown command '/nonsense'" in out
    after_reset = out.split("(new session)")[1]
    assert "agent (turn 1)> " in after_reset and IMG_TITLE in after_reset   # the turn counter restarted
    assert "never read" not in out


def test_chat_stops_after_ten_turns(tmp_path):
    from demo.chat import run
    from demo.render import Style
    from demo.session import ChatSession, ProductLookup, build_agent

    catalog, _, _ = write_catalog(tmp_path)
    session = ChatSession(build_agent(catalog), ProductLookup(catalog))
    msgs = ["I'm looking for Active Pants Sweatpants, but I'm still exploring."] + ["cotton"] * 10
    out = io.StringIO()
    assert run(session, io.StringIO("\n".join(msgs) + "\n"), out, Style(False), interactive=False) == 10
    text = out.getvalue()
    assert "agent (turn 10)> " in text and "agent (turn 11)" not in text
    assert "the benchmark's last" in text and "has had its 10 turns" in text


# ---- web API --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def web(tmp_path_factory):
    d = tmp_path_factory.mktemp("web")
    catalog, dataset, facts = write_catalog(d)
    server, url = start_web(catalog, {"tiny": dataset})
    yield {"url": url, "catalog": catalog, "dataset": dataset, "facts": facts, "server": server}
    server.stop()


def _request(url: str, body: object = None, ctype: str = "application/json", headers: dict | None = None):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, headers={"Content-Type": ctype, **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read()  # case-insensitive names (HTTP/1.1 servers may send them lower-case)
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def test_web_page_is_static_with_a_strict_policy(web):
    status, headers, body = _request(web["url"] + "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    csp = headers["Content-Security-Policy"]
    assert "script-src 'sha256-" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
    assert headers["X-Content-Type-Options"] == "nosniff"
    page = body.decode()
    assert page.count("<script>") == 1 and "http://" not in page and "https://" not in page
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in page, sink
    assert "alert(" not in page


def test_web_chat_round_trip_escapes_catalog_text(web):
    url = web["url"]
    s, _, raw = _request(url + "/api/chat", {"session": "t1", "message":
                                             "I'm looking for Active Pants Sweatpants, but I'm still exploring."})
    assert s == 200
    assert b"<script>" not in raw and b"</script>" not in raw and b"<img" not in raw
    assert b"\\u003cscript\\u003e" in raw
    r1 = json.loads(raw)
    assert r1["turn"] == 1 and r1["done"] is False
    first = r1["view"]["products"][0]
    assert first["parent_asin"] == web["facts"]["xss_pid"] and first["title"] == XSS_TITLE
    assert first["price_text"] == "n/a" and first["rating_number"] == 5000 and first["average_rating"] == 3.5
    ex = r1["view"]["explain"]
    assert ex["kind"] == "open_browsing" and ex["funnel"][0] == {"stage": "exact shelf", "count": 8}
    assert ex["questions"] and ex["commit"]["count"] == len(r1["view"]["products"])
    assert r1["view"]["ask_attribute"] == ex["ask_attribute"]
    r2 = json.loads(_request(url + "/api/chat", {"session": "t1", "message": "For that, what matters is: wool."})[2])
    r3 = json.loads(_request(url + "/api/chat", {"session": "t1", "message": "black please"})[2])
    assert (r2["turn"], r3["turn"]) == (2, 3)
    assert any(c["value"] == "wool" for c in r2["view"]["explain"]["accepted"])
    # a second session is independent, and a reset restarts the turn count
    assert json.loads(_request(url + "/api/chat", {"session": "t2", "message": "hello"})[2])["turn"] == 1
    assert _request(url + "/api/reset", {"session": "t1"})[0] == 200
    assert json.loads(_request(url + "/api/chat", {"session": "t1", "message": "hi"})[2])["turn"] == 1


def test_web_replay_matches_the_evaluator(web):
    url = web["url"]
    s, _, raw = _request(url + "/api/sessions?dataset=tiny")
    assert s == 200
    assert [x["sample_id"] for x in json.loads(raw)["sessions"]] == ["tiny_0001", "tiny_0002", "tiny_0003"]
    for sample_id in ("tiny_0002", "tiny_0003"):
        start = json.loads(_request(url + "/api/replay/start", {"dataset": "tiny", "sample_id": sample_id})[2])
        rec = evaluator_record(web["catalog"], web["dataset"], sample_id)
        assert start["turns"] == len(rec["transcript"]) and start["target"]["parent_asin"] == rec["target_parent_asin"]
        steps = []
        while True:
            step = json.loads(_request(url + "/api/replay/step", {"replay": start["replay"]})[2])
            steps.append(step)
            if step["last"]:
                break
            assert step["outcome"] is None
        assert [x["view"]["customer"] for x in steps] == [t["customer"] for t in rec["transcript"]]
        assert [[p["parent_asin"] for p in x["view"]["products"]] for x in steps] == \
            [t["recommendations"] for t in rec["transcript"]]
        out = steps[-1]["outcome"]
        assert (out["hit"], out["turn"], out["rank"]) == (rec["hit"], rec["turn"], rec["rank"])
        assert _request(url + "/api/replay/step", {"replay": start["replay"]})[0] == 409
    # tiny_0003 is an intent override: the target shown before the override does not count
    assert any(x["view"]["target_shown_uncounted"] for x in steps)


def test_web_api_rejects_bad_requests(web):
    url = web["url"]
    assert _request(url + "/api/chat", {"session": "x", "message": "hi"}, headers={"Host": "evil.example"})[0] == 403
    assert _request(url + "/api/chat", {"session": "x", "message": "hi"}, ctype="text/plain")[0] == 415
    assert _request(url + "/api/chat", b"{not json")[0] == 400
    assert _request(url + "/api/chat", {"session": "../../x", "message": "hi"})[0] == 400
    assert _request(url + "/api/chat", {"session": "x", "message": ""})[0] == 400
    assert _request(url + "/api/sessions?dataset=nope")[0] == 404
    assert _request(url + "/api/replay/start", {"dataset": "tiny", "sample_id": "nope"})[0] == 400
    assert _request(url + "/api/replay/step", {"replay": "nope"})[0] == 404
    assert _request(url + "/api/nothing", {})[0] == 404
    s, _, raw = _request(url + "/api/nothing")
    assert s == 404 and json.loads(raw) == {"error": "not found"}


def test_server_escapes_what_it_puts_in_html(tmp_path):
    from demo.session import ProductLookup
    from demo.web import DemoApp, json_bytes

    catalog, _, _ = write_catalog(tmp_path)
    app = DemoApp(object(), ProductLookup(catalog), {}, catalog_label="<b>cat</b>")
    assert b"&lt;b&gt;cat&lt;/b&gt;" in app.page and b"<b>cat" not in app.page
    raw = json_bytes({"t": "<script>&</script>"})
    assert b"<" not in raw and b">" not in raw and b"&" not in raw
    assert json.loads(raw) == {"t": "<script>&</script>"}


# ---- plots -------------------------------------------------------------------------------------------
def _results(path: Path, hits: list[tuple[str, int | None]], latency: float) -> Path:
    sessions = [{"sample_id": f"s{i}", "scenario_type": sc, "hit": t is not None, "turn": t, "rank": 1 if t else None,
                 "transcript": [{"turn": k, "latency_ms": latency * k} for k in range(1, (t or 10) + 1)]}
                for i, (sc, t) in enumerate(hits)]
    path.write_text(json.dumps({"sample_count": len(sessions), "hit_rate_at_10": 0.5, "mrr": 0.4, "mttc": 5.0,
                                "efficiency": 0.6, "recommended_technical_score": 0.49, "sessions": sessions}))
    return path


def test_plot_results_counts_and_writes_pngs(tmp_path):
    pytest.importorskip("matplotlib")
    from scripts import plot_results as PR

    a = _results(tmp_path / "a.json", [("buying", 1), ("buying", 1), ("buying", 3), ("browsing", None)], 2.0)
    b = _results(tmp_path / "b.json", [("buying", None), ("browsing", 10)], 5.0)
    runs = PR.load_runs([f"public/ours={a}", f"public/weak baseline={b}", f"para/ours={a}"])
    counts = PR.first_hit_counts(runs[0].sessions)
    assert counts["buying"] == [2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    assert counts["browsing"][10] == 1 and sum(counts["browsing"]) == 1
    assert PR.first_hit_counts(runs[1].sessions)["browsing"][9] == 1
    assert [r.group for r in runs] == ["public", "public", "para"] and runs[1].series == "weak baseline"
    written = PR.main(["--result", f"public/ours={a}", "--result", f"public/weak baseline={b}",
                       "--result", f"para/ours={a}", "--baseline", "organizer BM25=0.10671",
                       "--out-dir", str(tmp_path / "plots")])
    names = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert names == ["first_hit_turn.png", "latency.png", "scores.png"] and len(written) == 3
    for p in (tmp_path / "plots").iterdir():
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000
