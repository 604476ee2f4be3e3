"""Colour families: the basic word a shopper says against the shade or spelling a title uses."""
from __future__ import annotations

import pytest

from grounding.colours import colour_agreement, families


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
