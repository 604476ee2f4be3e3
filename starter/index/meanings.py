"""What a product is, as a vector: word meanings where BM25 sees only spellings.

A person says "a tee for my son" of "Boys' Crew Neck T-Shirt"; BM25 finds no
shared word but "tee" ~ "t-shirt" and "son" ~ "boys" are close in meaning.
Each product's title and shelf is the mean of its tokens' vectors (WordLlama's
static token embeddings: the tokenizer and float16 vectors that its PyPI
package ships, read with `tokenizers` and `safetensors`; no model server, no
download, no torch), normalised; a message is embedded the same way, and the
people model reads the cosine (`starter.people.features`, feature `meaning`).

The vectors are computed once when the index is built and stored in it as
float16 (50,000 products: 26 MB), so a cached index opens without
re-embedding.  Every text is tokenised alone (`Tokenizer.encode`: no batch,
so no padding and no thread pool that a later fork would inherit), and its
token vectors are summed in order, so a product's vector does not depend on
which others were embedded with it.
"""
from __future__ import annotations

import sqlite3
import threading
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Iterable

import numpy as np

TABLE = "meaning_vectors"
CHUNK = 256           # products embedded at a time while building (bounds the token vectors held: ~8 MB)


PACKAGE = "wordllama"
MODEL_FILES = ("tokenizers/l2_supercat_tokenizer_config.json", "weights/l2_supercat_256.safetensors")
TENSOR = "embedding.weight"
WORD_START = "\u2581"      # the tokenizer's mark of a token that begins a word


def model_identity() -> str:
    """The meaning model an index's vectors were made with, for the cache key: another release of the
    package may ship other token vectors, and a query must be embedded by the model its products were."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        release = version(PACKAGE)
    except PackageNotFoundError:
        release = "missing"
    return " ".join((PACKAGE, release) + MODEL_FILES)


@lru_cache(maxsize=1)
def token_model() -> tuple[object, np.ndarray]:
    """(tokenizer, float16 token vectors) of WordLlama's 256-dimension model, read straight from the files
    its installed package holds: the package's own code (which would fetch missing files from a hub, and
    imports an HTTP client and pydantic) is never run."""
    import importlib.util

    from safetensors import safe_open
    from tokenizers import Tokenizer
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"the {PACKAGE} package (the meaning model's files) is not installed")
    package = Path(list(spec.submodule_search_locations)[0])
    tokenizer = Tokenizer.from_file(str(package / MODEL_FILES[0]))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    with safe_open(str(package / MODEL_FILES[1]), framework="np") as f:
        vectors = np.ascontiguousarray(f.get_tensor(TENSOR), dtype=np.float16)
    return tokenizer, vectors


class MeaningEncoder:
    """Texts to unit vectors (float32): the mean of their tokens' vectors, zero for a text without tokens."""

    def __init__(self) -> None:
        self.tokenizer, self.vectors = token_model()
        self._lock = threading.Lock()          # one tokenizer object, several session threads

    def token_ids(self, text: str) -> np.ndarray:
        with self._lock:
            ids = self.tokenizer.encode(text, add_special_tokens=False).ids
        return np.clip(np.asarray(ids, dtype=np.int64), 0, len(self.vectors) - 1)

    def whole_words(self) -> frozenset[str]:
        """The lowercase words the tokenizer holds whole at a word's start ("heard", "silly", "sick"): English a
        person types on purpose, where a catalog word one letter away ("heart", "silky", "stick") is another
        word; a slip ("jeens", "husbnd", "waterprof") is split into pieces."""
        return frozenset(w for t in self.tokenizer.get_vocab() if t.startswith(WORD_START)
                         and (w := t[len(WORD_START):]).isalpha() and w.islower())

    def encode(self, texts: Iterable[str]) -> np.ndarray:
        """One unit row per text (float32)."""
        ids = [self.token_ids(t) for t in texts]
        if not ids:
            return np.zeros((0, self.vectors.shape[1]), dtype=np.float32)
        lengths = np.asarray([len(i) for i in ids], dtype=np.int64)
        out = np.zeros((len(ids), self.vectors.shape[1]), dtype=np.float32)
        has = lengths > 0
        if has.any():
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[has]
            sums = np.add.reduceat(self.vectors[np.concatenate(ids)].astype(np.float32), starts, axis=0)
            out[has] = sums / lengths[has, None]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


def product_text(title: str, shelf: str) -> str:
    """What a product's vector is made of: its title and its shelf (the category path's leaf)."""
    return f"{title}. {shelf}"


def product_vectors(encoder: MeaningEncoder, texts: Iterable[str], count: int) -> np.ndarray:
    """The unit vectors (float16) of the `count` texts `texts` yields, `CHUNK` at a time (each row independent of
    the chunking; the texts are made as they are read, never held all at once)."""
    out = np.zeros((count, encoder.vectors.shape[1]), dtype=np.float16)
    it = iter(texts)
    for a in range(0, count, CHUNK):
        out[a:a + CHUNK] = encoder.encode(islice(it, CHUNK))
    return out


def built_meanings(db: sqlite3.Connection, products: list) -> "Meanings":
    """The products' vectors, computed and stored in the index being built."""
    encoder = MeaningEncoder()
    vectors = product_vectors(encoder, (product_text(p.title, p.shelf) for p in products), len(products))
    store_meanings(db, vectors)
    return Meanings(vectors, encoder)


def store_meanings(db: sqlite3.Connection, vectors: np.ndarray, piece: int = 1 << 20) -> None:
    """The vectors as one little-endian float16 blob, written piece by piece from the array's own memory
    (no copy of the whole: at a million products it is 512 MB)."""
    data = np.ascontiguousarray(vectors, dtype="<f2")
    db.execute(f"CREATE TABLE {TABLE} (rows INTEGER, dims INTEGER, data BLOB)")
    db.execute(f"INSERT INTO {TABLE} (rowid, rows, dims, data) VALUES (1, ?, ?, zeroblob(?))",
               (int(data.shape[0]), int(data.shape[1]), int(data.nbytes)))
    view = memoryview(data).cast("B")
    with db.blobopen(TABLE, "data", 1) as blob:
        for a in range(0, len(view), piece):
            blob.write(view[a:a + piece])


def load_meanings(db: sqlite3.Connection) -> np.ndarray:
    """The stored vectors, read-only, over the blob's own bytes (no copy)."""
    rows, dims, data = db.execute(f"SELECT rows, dims, data FROM {TABLE}").fetchone()
    vectors = np.frombuffer(data, dtype="<f2")
    if vectors.size != rows * dims:
        raise sqlite3.DatabaseError(f"{TABLE}: {vectors.size} values for {rows} x {dims}")
    return vectors.reshape(rows, dims)


class Meanings:
    """The products' vectors and the encoder for what shoppers say."""

    def __init__(self, vectors: np.ndarray, encoder: MeaningEncoder) -> None:
        self.vectors = vectors
        self.encoder = encoder

    def similarity(self, text: str, ids: np.ndarray) -> np.ndarray:
        """The cosine between `text` and each product of `ids` (0 for all when the text has no tokens)."""
        query = self.encoder.encode([text])[0].astype(np.float64)
        return self.vectors[ids].astype(np.float64) @ query
