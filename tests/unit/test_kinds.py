"""How a prop's value is checked and read from context is found by the field's type itself, never by
how its annotation is spelt, and a type without a kind is refused when the tunables are defined (a
float field was read as text when kinds were keyed on annotation strings). Engine: none."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal, get_type_hints

import pytest

from sensor_digest_cdk.kinds import KINDS, TEXT, WHOLE, kind_of
from sensor_digest_cdk.tunables import KIND, Tunables

Seconds = int  # an alias: its annotation reads "Seconds", its type is int


@dataclass(frozen=True)
class Spelt:
    window: Seconds = 5
    mode: Literal["a", "b"] = "a"
    arns: tuple[str, ...] = ()


def test_a_kind_is_found_by_the_type_not_by_the_annotations_text() -> None:
    hints = get_type_hints(Spelt)
    assert [f.type for f in fields(Spelt)] == ["Seconds", "Literal['a', 'b']", "tuple[str, ...]"]
    assert kind_of(hints["window"]) is WHOLE and kind_of(hints["window"]).read("20") == 20
    assert kind_of(hints["mode"]) is TEXT
    assert kind_of(hints["arns"]).read("a, b") == ("a", "b")


@pytest.mark.parametrize("annotation", [float, bytes, list[str], dict[str, int]])
def test_a_type_without_a_kind_is_refused_naming_it(annotation: object) -> None:
    with pytest.raises(TypeError, match="has no kind"):
        kind_of(annotation)


def test_every_tunable_has_the_kind_of_its_type() -> None:
    hints = get_type_hints(Tunables)
    assert set(KIND) == {f.name for f in fields(Tunables)}
    assert all(KIND[name] is kind_of(hint) for name, hint in hints.items())
    assert KIND["ingest_batch_size"] is KINDS[int] and KIND["restrict_producers"] is KINDS[bool]
