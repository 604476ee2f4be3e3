"""Word meanings: products and messages as unit vectors, read offline, the same however they are batched."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from starter.index import meanings
from starter.index.catalog import CatalogIndex
from starter.index.meanings import MeaningEncoder, product_vectors
from starter.settings import SETTINGS


@pytest.fixture(scope="module")
def encoder() -> MeaningEncoder:
    return MeaningEncoder()


def test_vectors_are_unit_rows_and_a_text_without_tokens_is_zero(encoder: MeaningEncoder) -> None:
    v = encoder.encode(["a tee for my son", "", "Leather chelsea boot brown"])
    assert v.dtype == np.float32 and v.shape == (3, encoder.vectors.shape[1])
    assert np.allclose(np.linalg.norm(v[[0, 2]], axis=1), 1.0, atol=1e-5)
    assert not v[1].any()
    assert encoder.encode([]).shape == (0, encoder.vectors.shape[1])


def test_a_product_vector_does_not_depend_on_its_batch(encoder: MeaningEncoder,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ["Boys' Crew Neck T-Shirt. T-Shirts", "x", "", "Women's Block Heel Sandals. Sandals", "tee " * 40]
    together = product_vectors(encoder, texts, len(texts))
    monkeypatch.setattr(meanings, "CHUNK", 2)
    assert product_vectors(encoder, iter(texts), len(texts)).tobytes() == together.tobytes()
    alone = np.vstack([encoder.encode([t]) for t in texts]).astype(np.float16)
    assert alone.tobytes() == together.tobytes()


def test_words_of_the_same_meaning_are_closer_than_other_products(encoder: MeaningEncoder) -> None:
    """What BM25 cannot see: no shared word, but "tee" ~ "T-Shirt", "son" ~ "Boys"."""
    said, tee, sandal = encoder.encode(["a tee for my son", "Boys Crew Neck T-Shirt. T-Shirts",
                                        "Women's Block Heel Sandals. Sandals"])
    assert said @ tee > said @ sandal + 0.1


def test_the_model_is_read_from_the_package_files_without_its_downloading_code() -> None:
    """The package's own loader fetches missing files from a hub; the agent reads the shipped files only."""
    import subprocess
    import sys
    code = ("import sys; from starter.index.meanings import token_model; tok, vec = token_model(); "
            "assert vec.dtype.name == 'float16' and vec.ndim == 2 and tok.encode('boots').ids; "
            "print(sorted(m for m in ('wordllama', 'requests', 'urllib3', 'pydantic') if m in sys.modules))")
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_index_stores_every_products_vector(small_catalog: Path, tmp_path: Path) -> None:
    from starter.index.cache import IndexCache
    cache = IndexCache(tmp_path / "c")
    built = CatalogIndex(small_catalog, SETTINGS.index, cache)
    loaded = CatalogIndex(small_catalog, SETTINGS.index, cache)
    assert (built.cache_state, loaded.cache_state) == ("built", "loaded")
    assert built.meanings.vectors.shape[0] == len(built.products)
    assert built.meanings.vectors.tobytes() == loaded.meanings.vectors.tobytes()
    boots = [p.idx for p in built.products if "boot" in p.title.lower()]
    tees = [p.idx for p in built.products if "tee" in p.title.lower()]
    sim = built.meanings.similarity("ankle boots for my husband", np.asarray(boots + tees))
    assert sim[:len(boots)].min() > sim[len(boots):].max()


def test_the_meaning_compared_leaves_out_the_words_ruled_out() -> None:
    """"ankle booties for my wife, not suede" is not near suede: the ruled-out words (either number) are left
    out of the text whose meaning is compared; a message without them is compared as said."""
    from starter.people.features import _affirmed
    from starter.reading.parse import parse_message
    from starter.reading.understand import Reading
    said = [Reading.of(parse_message("ankle booties for my wife, not suede", 1)),
            Reading.of(parse_message("Polos are fine, not a polo with stripes", 2))]
    text = _affirmed(said, frozenset({"suede", "polo"}), [frozenset(), frozenset()])
    assert "suede" not in text.lower() and "polo" not in text.lower() and "booties" in text
    assert _affirmed(said[:1], frozenset(), [frozenset()]) == "ankle booties for my wife, not suede"


def test_the_meaning_compared_leaves_out_words_taken_back_and_remarks_on_the_list() -> None:
    """A value a later message replaces ("long sleeve" ... "oops, short sleeve") and a remark about the list shown
    ("these are mostly women's shoes") say nothing of the product wished for."""
    from starter.people.features import _affirmed
    from starter.people.words import taken_back
    from starter.reading.parse import parse_message
    from starter.reading.understand import Reading
    said = [Reading.of(parse_message(m, k)) for k, m in enumerate(
        ["long sleeve footie for a newborn girl", "oops, short sleeve", "these are mostly boys' ones, floral?"], 1)]
    text = _affirmed(said, frozenset(), taken_back(said))
    assert "long" not in text and "short sleeve" in text and "footie" in text
    assert "boys" not in text and "floral" in text
