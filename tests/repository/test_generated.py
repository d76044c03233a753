"""The files written from the tunables are what the model writes now: the construct's ``PipelineProps``
(``infra/sensor_digest_cdk/props.py``) and the options table in ``docs/configuration.md``, so a
reader of the repository (and a type checker of a user's app) sees every option as the construct
takes it. ``make generated`` writes both. Engine: none (files, the model in memory)."""

from __future__ import annotations

import typing
from pathlib import Path

from docs_hooks import context_options
from sensor_digest_cdk import props_writer
from sensor_digest_cdk.props import PipelineProps
from sensor_digest_cdk.shape import PipelineShape

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_props_are_what_the_tunables_write() -> None:
    assert props_writer.PROPS.read_text(encoding="utf-8") == props_writer.render(), "run make generated"


def test_the_construct_props_type_names_every_field_with_its_type() -> None:
    # PipelineProps types the construct's keyword props: a field it lacks could not be passed by a
    # type-checked app, a key it has that no field has would be refused at run time
    assert typing.get_type_hints(PipelineProps) == typing.get_type_hints(PipelineShape)


def test_the_configuration_page_holds_the_table_the_model_writes() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert context_options.MARKER in page and context_options.END_MARKER in page
    assert context_options.with_table(page) == page, "run make generated"
    defaults = "`ingestBatchSize`: 1,000<br>`ingestBatchingWindowSeconds`: 20"  # a line per key
    assert f"| `ingestBatchSize`, `ingestBatchingWindowSeconds` | {defaults} |" in page  # in the markdown itself
