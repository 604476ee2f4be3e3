"""Settings of the model layer, read from the environment once (`LLMConfig.from_env`)."""
from __future__ import annotations

import logging
import math
import os
import urllib.parse
from dataclasses import dataclass, fields
from typing import Any, Mapping

log = logging.getLogger(__name__)

#: Rerank never sends more candidates than this.
MAX_RERANK_CANDIDATES = 50

_TRUE = {"1", "true", "yes", "on", "y"}
_FALSE = {"0", "false", "no", "off", "n"}
_BACKEND_ALIASES = {
    "ollama": "ollama",
    "openai": "openai",
    "openai-compatible": "openai",
    "llama.cpp": "openai",
    "llamacpp": "openai",
    "llama-cpp": "openai",
    "vllm": "openai",
    "lmstudio": "openai",
}
_RERANK_METHODS = {"none": "none", "off": "none", "0": "none", "llm": "llm", "embedding": "embedding", "embed": "embedding"}
_EMBED_BACKENDS = {
    "ollama": "ollama",
    "sentence-transformers": "sentence-transformers",
    "sentence_transformers": "sentence-transformers",
    "sentencetransformers": "sentence-transformers",
    "st": "sentence-transformers",
    "local": "sentence-transformers",
}


@dataclass(frozen=True)
class LLMConfig:
    """Settings of the model layer; :meth:`from_env` reads them from the environment."""

    enabled: bool = False  # LLM_ENABLED
    backend: str = "ollama"  # LLM_BACKEND: ollama | openai
    model: str = "qwen3:4b"  # LLM_MODEL
    ollama_url: str = "http://127.0.0.1:11434"  # OLLAMA_URL
    openai_base_url: str = "http://127.0.0.1:8080/v1"  # OPENAI_BASE_URL
    openai_api_key: str | None = None  # OPENAI_API_KEY
    timeout: float = 8.0  # LLM_TIMEOUT, seconds, total per call
    rerank_method: str = "none"  # RERANK_METHOD: none | llm | embedding
    embed_model: str = "all-minilm"  # EMBED_MODEL
    embed_backend: str = "ollama"  # EMBED_BACKEND: ollama | sentence-transformers
    rerank_top_n: int = 8  # RERANK_TOP_N
    rerank_weight: float = 0.15  # RERANK_WEIGHT

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "LLMConfig":
        """Build a config from ``env`` (default ``os.environ``).

        Unset or blank variables take the defaults; a value that cannot be
        parsed or is out of range also takes the default, with a logged
        warning -- a typo in an environment variable never crashes the agent.
        """
        r = _EnvReader(os.environ if env is None else env)
        d = {f.name: f.default for f in fields(cls)}
        return cls(
            enabled=r.boolean("LLM_ENABLED", d["enabled"]),
            backend=r.choice("LLM_BACKEND", _BACKEND_ALIASES, d["backend"]),
            model=r.text("LLM_MODEL", d["model"]),
            ollama_url=r.url("OLLAMA_URL", d["ollama_url"]),
            openai_base_url=r.url("OPENAI_BASE_URL", d["openai_base_url"]),
            openai_api_key=r.text("OPENAI_API_KEY", d["openai_api_key"]),
            timeout=r.number("LLM_TIMEOUT", d["timeout"], 0.05, 600.0),
            rerank_method=r.choice("RERANK_METHOD", _RERANK_METHODS, d["rerank_method"]),
            embed_model=r.text("EMBED_MODEL", d["embed_model"]),
            embed_backend=r.choice("EMBED_BACKEND", _EMBED_BACKENDS, d["embed_backend"]),
            rerank_top_n=r.number("RERANK_TOP_N", d["rerank_top_n"], 1, MAX_RERANK_CANDIDATES, integer=True),
            rerank_weight=r.number("RERANK_WEIGHT", d["rerank_weight"], 0.0, 1.0),
        )

    def describe(self) -> str:
        """One line for logs (never shows the API key)."""
        where = self.ollama_url if self.backend == "ollama" else self.openai_base_url
        return (
            f"llm enabled={int(self.enabled)} backend={self.backend} model={self.model} url={where} "
            f"timeout={self.timeout:g}s rerank={self.rerank_method} top_n={self.rerank_top_n} "
            f"weight={self.rerank_weight:g} embed={self.embed_backend}:{self.embed_model}"
        )


class _EnvReader:
    """Typed reads of environment variables: a blank or unset one is None; a bad one warns and gives
    the default."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def raw(self, name: str) -> str | None:
        value = self.env.get(name)
        if value is None:
            return None
        value = value.strip()
        return value or None

    @staticmethod
    def warn(name: str, value: str, default: Any, why: str) -> None:
        log.warning("%s=%r is not valid (%s); using the default %r", name, value, why, default)

    def boolean(self, name: str, default: bool) -> bool:
        v = self.raw(name)
        if v is None:
            return default
        if v.lower() in _TRUE:
            return True
        if v.lower() in _FALSE:
            return False
        self.warn(name, v, default, "expected 1/0, true/false, yes/no or on/off")
        return default

    def choice(self, name: str, table: Mapping[str, str], default: str) -> str:
        v = self.raw(name)
        if v is None:
            return default
        got = table.get(v.lower())
        if got is None:
            self.warn(name, v, default, "expected one of " + ", ".join(sorted(set(table.values()))))
            return default
        return got

    def number(self, name: str, default: float, lo: float, hi: float, integer: bool = False) -> Any:
        v = self.raw(name)
        if v is None:
            return default
        try:
            x = float(v)
        except ValueError:
            self.warn(name, v, default, "not a number")
            return default
        if not math.isfinite(x) or not lo <= x <= hi:
            self.warn(name, v, default, f"expected a number from {lo:g} to {hi:g}")
            return default
        if integer:
            if x != int(x):
                self.warn(name, v, default, "expected a whole number")
                return default
            return int(x)
        return x

    def url(self, name: str, default: str) -> str:
        v = self.raw(name)
        if v is None:
            return default
        if "://" not in v:
            v = "http://" + v
        parsed = urllib.parse.urlsplit(v)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            self.warn(name, v, default, "expected an http(s) URL")
            return default
        return v.rstrip("/")

    def text(self, name: str, default: str | None) -> str | None:
        v = self.raw(name)
        return default if v is None else v
