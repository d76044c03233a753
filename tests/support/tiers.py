"""The suite's tiers: each folder under ``tests/`` is one engine, and the folder says it.

- Every test gets its folder's marker (``unit``, ``moto``, ``dynamodb_local``, ``synth``,
  ``repository``; declared in pyproject.toml): ``pytest -m synth`` runs the template tests.
- A test asks only for the fixtures of the engines its folder runs on. A test under ``tests/unit/``
  or ``tests/repository/`` that asks for DynamoDB Local, moto or a synthesized stack fails before
  any engine starts, and says where it belongs.
- A test module under ``tests/`` outside the tier folders fails, naming them.

``tests/conftest.py`` registers the hooks (``mark_tiers`` at collection). ``docs/examples`` is no
tier: users copy from it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TIERS = ("unit", "moto", "dynamodb_local", "synth", "repository")
"""The folders under ``tests/``, each its tier's marker."""

ENGINE_NAMES = {"dynamodb_local": "DynamoDB Local", "moto": "moto", "synth": "a synthesized stack"}

ENGINE_FIXTURES = {
    **dict.fromkeys(
        (
            "ddb_endpoint",
            "engine_endpoint",
            "session",
            "ddb",
            "tables",
            "summary_settings",
            "summary_handler",
            "dead_letters",
            "ingest_settings",
            "ingest_session",
            "ingest_handler",
            "lambda_entry_point",
            "server",
            "running",
            "machine_context",
        ),
        "dynamodb_local",
    ),
    "moto_aws": "moto",
    **dict.fromkeys(("stack_and_template", "template", "synth_with"), "synth"),
}
"""The fixtures that start or reach an engine, and which: tests/conftest.py's and the tier folders'."""

ENGINES_OF = {
    "unit": frozenset(),
    "repository": frozenset(),
    "moto": frozenset({"moto"}),
    "synth": frozenset({"synth"}),
    # moto's SQS beside it (the dead-letter queue); the ingest role's grant reads a synthesized stack
    "dynamodb_local": frozenset({"dynamodb_local", "moto", "synth"}),
}
"""The engines each tier's tests may ask for."""

_NOT_TIERED = "no tier"


def tier_of(path: Path, root: Path) -> str | None:
    """The tier of a test module: its folder under ``tests/``; ``_NOT_TIERED`` for a module of
    ``tests/`` outside the tier folders; None outside ``tests/`` (``docs/examples``)."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return None
    if not parts or parts[0] != "tests":
        return None
    return parts[1] if len(parts) > 2 and parts[1] in TIERS else _NOT_TIERED


def refusal(item: pytest.Item, tier: str) -> str | None:
    """Why ``item`` may not run in ``tier`` (its folder, or the engines its fixtures reach), or None."""
    where = item.nodeid.split("::")[0]
    if tier == _NOT_TIERED:
        return f"{where} is in no tier's folder: move it to tests/<tier>/, one of {', '.join(TIERS)} (docs/testing.md)"
    info = getattr(item, "_fixtureinfo", None)
    own = info.name2fixturedefs if info is not None else {}
    asked: dict[str, list[str]] = {}
    for name in getattr(item, "fixturenames", ()):
        engine = ENGINE_FIXTURES.get(name)
        defined = own.get(name)
        if engine is None or engine in ENGINES_OF[tier] or (defined and defined[-1].baseid == where):
            continue  # not an engine's, one this tier runs on, or the module's own fixture of that name
        asked.setdefault(engine, []).append(name)
    if not asked:
        return None
    engines = " and ".join(f"{ENGINE_NAMES[e]} (fixtures {', '.join(sorted(asked[e]))})" for e in sorted(asked))
    allowed = " and ".join(ENGINE_NAMES[e] for e in sorted(ENGINES_OF[tier])) or "no engine"
    home = min((t for t in TIERS if set(asked) <= ENGINES_OF[t]), key=lambda t: len(ENGINES_OF[t]))
    return f"{item.nodeid} asks for {engines}, but tests under tests/{tier}/ run on {allowed}: move it to tests/{home}/"


def mark_tiers(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test marked by its folder."""
    for item in items:
        tier = tier_of(item.path, config.rootpath)
        if tier in TIERS:
            item.add_marker(getattr(pytest.mark, tier))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test that asks for an engine its folder does not run on fails here, before any fixture."""
    tier = tier_of(item.path, item.config.rootpath)
    why = None if tier is None else refusal(item, tier)
    if why is not None:
        pytest.fail(why, pytrace=False)
