"""Colour families: the basic word a shopper says against the shade or spelling a title uses."""
from __future__ import annotations

import pytest

from grounding.colours import colour_agreement, colours_said, families


@pytest.mark.parametrize("title,said", [
    ("PU Leather Slim Casual Daypacks, Dark Grey", "gray"), ("Baya Clogs, Neo Mint", "green"),
    ("Bifold Wallet with Zipper, Burgundy", "red"), ("Summer Belts, Rust", "brown"), ("Scrub Top - Navy", "blue"),
])
def test_a_shade_agrees_with_its_family(title: str, said: str) -> None:
    assert colour_agreement(title, [said]) == 1.0


def test_another_colour_disagrees_and_tone_or_pattern_says_nothing() -> None:
    assert colour_agreement("Women's Rubber Boot, Black", ["white"]) == -1.0
    assert colour_agreement("Leopard Print Light Scarf", ["black"]) == 0.0        # no family named
    assert colour_agreement("Multicolor Unisex Bandana, Pink", ["blue"]) == 0.0   # every colour is in it
    assert colour_agreement("Women's Rubber Boot, Black", []) == 0.0


def test_a_shade_may_belong_to_two_families() -> None:
    assert families(["coral"]) == {"pink", "orange"} and families(["grey"]) == families(["gray"])


@pytest.mark.parametrize("text,said", [
    ("actually dusty rose", {"rose"}), ("he wants wool in a cream color", {"cream"}),
    ("maroon or teal?", {"maroon", "teal"}),
    ("black snow boots", {"black"}), ("plush coral fleece robe", set()), ("cold mornings with coffee", set()),
])
def test_a_message_names_shades_but_not_words_of_another_sense(text: str, said: set[str]) -> None:
    assert colours_said(text) == said
