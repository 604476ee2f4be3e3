"""The catalog's store names, read in a person's messages (misspelt ones too)."""
from __future__ import annotations

from grounding.brands import BrandMatcher, BrandMention, BrandRejection, of_the_maker
from starter.index.catalog import CatalogIndex
from starter.people.words import PEOPLE_STOP
from starter.settings import GROUNDING

MEMO_ENTRIES = 4096       # messages whose brands are remembered (emptied when full)


class Brands:
    """The catalog's store names for people turns, read on first use (template sessions never need them)."""

    def __init__(self, index: CatalogIndex) -> None:
        self.index = index
        self._matcher: BrandMatcher | None = None
        self._products: dict[str, list[int]] | None = None
        self._read: dict[str, tuple[list[BrandMention], list[BrandRejection]]] = {}
        self._makers: dict[str, list[int]] = {}

    def read(self, text: str) -> tuple[list[BrandMention], list[BrandRejection]]:
        """The brands a message names (memoised: a conversation's messages are read again every turn)."""
        got = self._read.get(text)
        if got is None:
            got = self.matcher().read(text)
            if len(self._read) >= MEMO_ENTRIES:
                self._read.clear()
            self._read[text] = got
        return got

    def matcher(self) -> BrandMatcher:
        if self._matcher is None:
            sizes = {store: len(ids) for store, ids in self._by_store().items()}
            df = self.index.word_df
            self._matcher = BrandMatcher(sizes, lambda w: df.get(w, 0), GROUNDING, self.index.text_df,
                                         everyday=PEOPLE_STOP)
        return self._matcher

    def products_of(self, store: str) -> list[int]:
        """The store's products, most reviewed first (tie: parent_asin)."""
        return self._by_store().get(store, [])

    def maker_products(self, store: str) -> list[int]:
        """The products of the maker named by a store name, its lines' too (`grounding.brands.of_the_maker`),
        most reviewed first (tie: the catalog's popularity order)."""
        got = self._makers.get(store)
        if got is None:
            lines = {s for s in self._by_store() if of_the_maker(s, store)}
            got = [i for i in self.index.popular if self.index.products[i].store in lines] if len(lines) > 1 \
                else self.products_of(store)
            if len(self._makers) >= MEMO_ENTRIES:
                self._makers.clear()
            self._makers[store] = got
        return got

    def _by_store(self) -> dict[str, list[int]]:
        """Every store's products, most reviewed first: one pass over the catalog, on first use."""
        if self._products is None:
            by_store: dict[str, list[int]] = {}
            products = self.index.products
            for i in self.index.popular:
                name = products[i].store
                if name:
                    by_store.setdefault(name, []).append(i)
            self._products = by_store
        return self._products
