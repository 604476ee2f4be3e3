"""Material families: the material a shopper says against the materials a product names, in its title and in
its material card values, and the people model's column that reads them."""
from __future__ import annotations

from pathlib import Path

from grounding.materials import families, material_agreement, materials_said, named_materials
from starter.index.catalog import CatalogIndex
from starter.people.facts import conversation_facts
from starter.people.features import COLUMN
from starter.people.ranking import candidate_features
from starter.settings import SETTINGS
from tests.conftest import product, write_rows
from tests.test_moves import said


def test_a_word_of_the_family_agrees() -> None:
    assert material_agreement(named_materials("Sports Bra", ["Material: 91% Polyamide, 9% Elastane"]),
                              families(["nylon", "spandex"])) == 1.0
    assert material_agreement(named_materials("Suede Chelsea Boots", ["Rubber sole"]), families(["leather"])) == 1.0
    assert material_agreement(named_materials("Soft Tee", ["95% Viscose, 5% Spandex"]), families(["rayon"])) == 1.0


def test_a_weave_agrees_when_named_and_fibres_never_count_against_it() -> None:
    stretch_cotton = ["98% Cotton, 2% Elastane"]
    assert material_agreement(named_materials("Denim Jacket", stretch_cotton), families(["denim"])) == 1.0
    assert material_agreement(named_materials("Slim Jeans", stretch_cotton), families(["denim"])) == 0.0
    assert material_agreement(named_materials("Slim Jeans", stretch_cotton), families(["denim", "linen"])) == -1.0


def test_kin_words_said_are_read() -> None:
    assert materials_said("modal, soft") == {"modal"} and materials_said("a cotton poly mix") == {"cotton", "poly"}
    assert families(materials_said("poly blend")) == {"polyester"}


def test_other_materials_only_disagree_and_none_named_says_nothing() -> None:
    assert material_agreement(named_materials("Linen Shirt", ["100% Linen"]), families(["cotton"])) == -1.0
    plain = named_materials("Casual Shirt", ["Imported", "Machine Wash"])
    assert material_agreement(plain, families(["cotton"])) == 0.0
    assert material_agreement(named_materials("Linen Shirt", []), families([])) == 0.0
    assert families(["fabric"]) == frozenset()                     # a word of material talk, no material


def test_the_material_column_reads_title_and_material_values(tmp_path: Path) -> None:
    cats = ["Clothing, Shoes & Jewelry", "Men", "Clothing", "Shirts", "Casual Button-Down Shirts"]
    rows = [product("L", "Men's Summer Button Down Shirt", ["100% Linen", "Imported"], cats, 50),
            product("C", "Men's Summer Button Down Shirt", ["100% Cotton", "Imported"], cats, 50),
            product("N", "Men's Summer Button Down Shirt", ["Imported", "Machine Wash"], cats, 50)]
    index = CatalogIndex(write_rows(tmp_path / "catalog.jsonl", rows), SETTINGS.index)
    readings = said("a summer button down shirt for my husband", "linen if possible")
    pool = candidate_features(index, readings, conversation_facts(readings), SETTINGS.people)
    got = {index.products[i].pid: pool.features[k, COLUMN["material"]] for k, i in enumerate(pool.ids.tolist())}
    assert got == {"L": 1.0, "C": -1.0, "N": 0.0}
    readings = said("a summer button down shirt for my husband", "not linen")     # ruled out: not said
    pool = candidate_features(index, readings, conversation_facts(readings), SETTINGS.people)
    assert not pool.features[:, COLUMN["material"]].any()
