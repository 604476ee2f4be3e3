"""The products of the index as the cache file stores them, and the lookups derived from them.

Most of what a product holds is shared with many others: its card values (944,000 distinct
values in the 4 million of a million-row catalog), its shelf, its pattern of value types, its
audience.  Each of those is stored once with an id, and per product only ids are kept, as int32
arrays; `popular` (the products by -rating_number, then parent_asin) is stored too.  Reading a
million products back is then one pass of list lookups, and the shelves and the clue lists
(card value -> products) come from array sorts instead of a dict append per card value (a warm
start of the million-row catalog spent 9 of its 20 s there).
"""
from __future__ import annotations

import gc
import sqlite3
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from grounding.words import tokens

_SEP = "\x1f"
_LABEL_KINDS = ("shelf", "types", "audience", "store")


@dataclass(frozen=True, slots=True)
class Product:
    """What the agent keeps of a catalog row (compact on purpose)."""

    idx: int
    pid: str
    title: str
    shelf: str
    price: float | None
    rating_number: int
    average_rating: float
    constraints: tuple[str, ...]   # hard + soft, reveal order
    types: tuple[str, ...]         # classify() of each constraint
    audience: frozenset[str] = frozenset()   # who it is for (grounding.audience), empty if not said
    store: str = ""                # the brand / store name as the catalog writes it ("" if none)

    @property
    def text(self) -> str:
        """The title and card values as one string: the words a product states (tokenised by
        `CatalogIndex.product_tokens`, read for what it lacks by the people path's negation feature)."""
        return self.title + " " + " ".join(self.constraints)


@dataclass(frozen=True)
class ProductColumns:
    """The products' shared parts as ids (what the shelves and clue lists are derived from)."""

    values: list[str]            # distinct card values, in order of first appearance
    card_values: np.ndarray      # int32: every product's card as value ids, one product after another
    card_offsets: np.ndarray     # int64: product i's card is card_values[card_offsets[i]:card_offsets[i + 1]]
    shelves: list[str]           # distinct shelves, in order of their first product
    shelf: np.ndarray            # int32: each product's shelf id
    popular: list[int]           # products by -rating_number, then parent_asin
    type_patterns: list[tuple[str, ...]]   # distinct card type patterns, in order of their first product
    types: np.ndarray            # int32: each product's type pattern id


@contextmanager
def collection_paused() -> Iterator[None]:
    """No garbage collection while an index is built or loaded: it makes millions of objects that
    live as long as the index, and each of the collections their allocations trigger walks all the
    ones made before (half of a million-row load).  The previous state comes back after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _joined(values: Sequence[str]) -> str:
    """Type names or audience words as one label.  They never hold the separator; checked anyway."""
    if any(_SEP in v for v in values):
        raise ValueError(f"a catalog label holds the separator U+001F: {values!r}")
    return _SEP.join(values)


def _split(text: str) -> tuple[str, ...]:
    return tuple(text.split(_SEP)) if text else ()


def columns_of(products: list[Product]) -> ProductColumns:
    """The ids of a freshly built product list (ids in order of first appearance)."""
    value_id: dict[str, int] = {}
    shelf_id: dict[str, int] = {}
    type_id: dict[tuple[str, ...], int] = {}
    ids: list[int] = []
    offsets = [0]
    shelf: list[int] = []
    for p in products:
        ids.extend([value_id.setdefault(v, len(value_id)) for v in p.constraints])
        offsets.append(len(ids))
        shelf.append(shelf_id.setdefault(p.shelf, len(shelf_id)))
    type_ids = [type_id.setdefault(p.types, len(type_id)) for p in products]
    keys = [(-p.rating_number, p.pid) for p in products]
    return ProductColumns(list(value_id), np.asarray(ids, dtype=np.int32), np.asarray(offsets, dtype=np.int64),
                          list(shelf_id), np.asarray(shelf, dtype=np.int32),
                          sorted(range(len(products)), key=keys.__getitem__), list(type_id),
                          np.asarray(type_ids, dtype=np.int32))


def _text_column(texts: list[str]) -> tuple[bytes, np.ndarray]:
    """Strings as one UTF-8 blob and their character offsets in it (decoded once, then sliced).  A lone
    surrogate cannot be stored: UnicodeEncodeError, as SQLite gives for a text column."""
    offsets = np.zeros(len(texts) + 1, dtype="<i8")
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    return "".join(texts).encode("utf-8"), offsets


def _texts(blob: bytes, offsets: np.ndarray) -> list[str]:
    text = blob.decode("utf-8")
    ends = offsets.tolist()
    return [text[a:b] for a, b in zip(ends, ends[1:])]


def audience_column(products: list[Product]) -> tuple[list[frozenset[str]], np.ndarray]:
    """Each distinct audience set, in the order first met, and per product its set's place among them."""
    places: dict[frozenset[str], int] = {}
    ids = np.asarray([places.setdefault(p.audience, len(places)) for p in products], dtype="<i4")
    return list(places), ids


def price_column(products: list[Product]) -> np.ndarray:
    """Per product its price, NaN where it has none."""
    return np.asarray([np.nan if p.price is None else p.price for p in products], dtype="<f8")


def store(db: sqlite3.Connection, products: list[Product], cols: ProductColumns) -> None:
    """Write every product as columns: texts as blobs with offsets, numbers and ids as arrays, each
    distinct card value and label once (no table of a million rows to step through at start)."""
    db.execute("CREATE TABLE card_values (id INTEGER PRIMARY KEY, value TEXT)")
    db.executemany("INSERT INTO card_values VALUES (?, ?)", enumerate(cols.values))
    audiences, audience_ids = audience_column(products)
    stores: dict[str, int] = {}
    store_ids = [stores.setdefault(p.store, len(stores)) for p in products]
    db.execute("CREATE TABLE labels (kind TEXT, id INTEGER, label TEXT, PRIMARY KEY (kind, id))")
    db.executemany("INSERT INTO labels VALUES (?, ?, ?)",
                   [("shelf", k, s) for k, s in enumerate(cols.shelves)]
                   + [("types", k, _joined(t)) for k, t in enumerate(cols.type_patterns)]
                   + [("audience", k, _joined(sorted(a))) for k, a in enumerate(audiences)]
                   + [("store", k, name) for k, name in enumerate(stores)])
    pid_text, pid_offsets = _text_column([p.pid for p in products])
    title_text, title_offsets = _text_column([p.title for p in products])
    arrays: dict[str, bytes | np.ndarray] = {
        "pid_text": pid_text, "pid_offsets": pid_offsets, "title_text": title_text, "title_offsets": title_offsets,
        "price": price_column(products),
        "rating_number": np.asarray([p.rating_number for p in products], dtype="<i8"),
        "average_rating": np.asarray([p.average_rating for p in products], dtype="<f8"),
        "card_values": cols.card_values.astype("<i4"), "card_offsets": cols.card_offsets.astype("<i8"),
        "shelf": cols.shelf.astype("<i4"), "types": cols.types.astype("<i4"),
        "audience": audience_ids, "store": np.asarray(store_ids, dtype="<i4"),
        "popular": np.asarray(cols.popular, dtype="<i4")}
    db.execute("CREATE TABLE product_arrays (name TEXT PRIMARY KEY, data BLOB)")
    db.executemany("INSERT INTO product_arrays VALUES (?, ?)",
                   ((k, a if isinstance(a, bytes) else a.tobytes()) for k, a in arrays.items()))


def load(db: sqlite3.Connection) -> tuple[list[Product], ProductColumns]:
    """The products and their columns from a stored index (each shared part is one object)."""
    blobs = {name: blob for name, blob in db.execute("SELECT name, data FROM product_arrays")}

    def array(name: str, dtype: str) -> np.ndarray:
        return np.frombuffer(blobs[name], dtype=dtype)
    card_values, card_offsets, shelf = array("card_values", "<i4"), array("card_offsets", "<i8"), array("shelf", "<i4")
    values = [v for (v,) in db.execute("SELECT value FROM card_values ORDER BY id")]
    labels: dict[str, list[str]] = {kind: [] for kind in _LABEL_KINDS}
    for kind, k, label in db.execute("SELECT kind, id, label FROM labels ORDER BY kind, id"):
        if k != len(labels[kind]):
            raise sqlite3.DatabaseError(f"labels table: {kind} ids out of order")
        labels[kind].append(label)
    types = [_split(t) for t in labels["types"]]
    audiences = [frozenset(_split(a)) for a in labels["audience"]]
    flat = list(map(values.__getitem__, card_values.tolist()))     # one string object per value
    offsets = card_offsets.tolist()
    pids = _texts(blobs["pid_text"], array("pid_offsets", "<i8"))
    titles = _texts(blobs["title_text"], array("title_offsets", "<i8"))
    prices = [None if x != x else x for x in array("price", "<f8").tolist()]     # NaN: no price
    n = len(pids)
    type_ids = array("types", "<i4")
    columns = (titles, map(labels["shelf"].__getitem__, shelf.tolist()), prices,
               array("rating_number", "<i8").tolist(), array("average_rating", "<f8").tolist(),
               map(types.__getitem__, type_ids.tolist()),
               map(audiences.__getitem__, array("audience", "<i4").tolist()),
               map(labels["store"].__getitem__, array("store", "<i4").tolist()))
    if not n == len(titles) == len(prices) == len(offsets) - 1 == len(shelf):
        raise sqlite3.DatabaseError("product arrays disagree in length")
    products = [Product(idx, pid, title, s, price, rn, ar, tuple(flat[a:b]), t, u, store)
                for idx, pid, a, b, title, s, price, rn, ar, t, u, store in zip(range(n), pids, offsets, offsets[1:],
                                                                             *columns)]
    popular = array("popular", "<i4").tolist()
    return products, ProductColumns(values, card_values, card_offsets, labels["shelf"], shelf, popular, types, type_ids)


def shelf_lists(cols: ProductColumns) -> dict[str, list[int]]:
    """Each shelf's products, most reviewed first (tie: parent_asin), as `popular` orders them; the
    shelves in order of their first product in the catalog."""
    pop = np.asarray(cols.popular, dtype=np.int64)
    on = cols.shelf[pop]
    grouped = pop[np.argsort(on, kind="stable")]
    ends = np.cumsum(np.bincount(on, minlength=len(cols.shelves))).tolist()
    return {name: grouped[a:b].tolist() for name, a, b in zip(cols.shelves, [0] + ends, ends)}


def places(order: list[int]) -> list[int]:
    """Each item's position in `order` (a permutation of range(len(order)))."""
    place = np.empty(len(order), dtype=np.int64)
    place[np.asarray(order, dtype=np.int64)] = np.arange(len(order), dtype=np.int64)
    return place.tolist()


class ClueLists(Mapping):
    """Card value -> the products whose card holds it (ascending idx, each once), in order of the
    values' first appearance.  Each list is made from two arrays on first use and kept: building a
    list per card value at every start cost seconds at a million products, and a turn reads a few."""

    def __init__(self, cols: ProductColumns) -> None:
        n = len(cols.card_offsets) - 1
        owner = np.repeat(np.arange(n, dtype=np.int32), np.diff(cols.card_offsets))
        by_value = np.argsort(cols.card_values, kind="stable")     # products ascending within a value
        value, product = cols.card_values[by_value], owner[by_value]
        once = np.ones(len(value), dtype=bool)                     # a value twice on one card: once
        once[1:] = (value[1:] != value[:-1]) | (product[1:] != product[:-1])
        self._products = product[once]
        ends = np.cumsum(np.bincount(value[once], minlength=len(cols.values)))
        self._starts = np.concatenate(([0], ends)).tolist()
        self._id: dict[str, int] = dict(zip(cols.values, range(len(cols.values))))
        self._made: dict[int, list[int]] = {}

    def __getitem__(self, value: str) -> list[int]:
        return self._list(self._id[value])

    def get(self, value: str, default=None):  # type: ignore[override]
        k = self._id.get(value)
        return default if k is None else self._list(k)

    def _list(self, k: int) -> list[int]:
        got = self._made.get(k)
        if got is None:
            got = self._made[k] = self._products[self._starts[k]:self._starts[k + 1]].tolist()
        return got

    def __contains__(self, value: object) -> bool:
        return value in self._id

    def id_of(self, value: str) -> int | None:
        """The value's id in the product columns (None for a string no card holds)."""
        return self._id.get(value)

    def __iter__(self) -> Iterator[str]:
        return iter(self._id)

    def __len__(self) -> int:
        return len(self._id)


def store_clue_postings(db: sqlite3.Connection, postings: dict[str, list[int]], mass: list[float],
                         order: list[int]) -> None:
    """The clue index's postings and masses, as arrays (int32 positions, float64 masses: the same floats),
    and its clue order (card value ids, sorted by value)."""
    db.execute("CREATE TABLE clue_postings (word TEXT PRIMARY KEY, positions BLOB)")
    db.executemany("INSERT INTO clue_postings VALUES (?, ?)",
                   ((w, np.asarray(p, dtype="<i4").tobytes()) for w, p in postings.items()))
    db.execute("CREATE TABLE clue_arrays (name TEXT PRIMARY KEY, data BLOB)")
    db.executemany("INSERT INTO clue_arrays VALUES (?, ?)", [("mass", np.asarray(mass, dtype="<f8").tobytes()),
                                                            ("order", np.asarray(order, dtype="<i4").tobytes())])


def read_clue_postings(db: sqlite3.Connection) -> tuple[dict[str, list[int]], list[float], list[int]]:
    """What `store_clue_postings` wrote: postings, masses and clue order, as the lists the clue index uses."""
    postings = {w: np.frombuffer(b, dtype="<i4").tolist()
                for w, b in db.execute("SELECT word, positions FROM clue_postings ORDER BY rowid")}
    arrays = dict(db.execute("SELECT name, data FROM clue_arrays"))
    mass, order = arrays["mass"], arrays["order"]
    return postings, np.frombuffer(mass, dtype="<f8").tolist(), np.frombuffer(order, dtype="<i4").tolist()


class ClueWordCounter:
    """Each card value's words (sorted, once each), and per word the number of products whose card
    values hold it (its document frequency, for rarity weighting).

    A cold build feeds it each product as it is read: the read is the build's parallel part (the
    parsing workers and the FTS5 filler share the cores), so what the reading process does there costs
    less than the same work after it, when one core works alone (at a million rows, 20 s).  Values
    are counted and tokenised once each, then the counts spread over their words: the same counts, and
    the same first-seen order of values and words, as a walk over every (product, value, word)."""

    def __init__(self) -> None:
        self.uses: dict[str, int] = {}
        self.words: dict[str, tuple[str, ...]] = {}

    def add(self, constraints: tuple[str, ...]) -> None:
        uses = self.uses
        for v in dict.fromkeys(constraints):
            n = uses.get(v)
            if n is None:
                uses[v] = 1
                self.words[v] = tuple(sorted(set(tokens(v))))
            else:
                uses[v] = n + 1

    def finish(self) -> tuple[dict[str, tuple[str, ...]], dict[str, int]]:
        """(each value's words, each word's document frequency)."""
        df: dict[str, int] = {}
        words = self.words
        for v, n in self.uses.items():
            for tok in words[v]:
                df[tok] = df.get(tok, 0) + n
        return words, df


class ReleasedClueWords(dict):
    """`CatalogIndex.clue_words` after `release_clue_words`: any lookup says what happened."""

    def __missing__(self, key: str) -> tuple[str, ...]:
        raise LookupError("the card values' words were released once the agent's clue index was built "
                          "(CatalogIndex.release_clue_words); build a Gate on a fresh CatalogIndex")
