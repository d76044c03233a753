"""The suite's tiers (``tests/support/tiers.py``): each test is marked by its folder, and a test that
asks for an engine its folder does not run on fails before that engine starts, saying where it
belongs. Engine: none. pytest runs a tiny generated suite in process (``pytester``): its conftest
registers the hooks tests/conftest.py registers, its engine fixtures are stand-ins that say when
they start, and its markers are the ones pyproject.toml declares (``--strict-markers``)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.order import LONGEST_FIRST, longest_first
from tests.support.tiers import TIERS

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = """
import pytest

from tests.support.tiers import mark_tiers, pytest_runtest_setup


def pytest_collection_modifyitems(config, items):
    mark_tiers(config, items)


@pytest.fixture
def tables():
    print("DynamoDB Local started")
    return "tables"


@pytest.fixture
def template():
    print("stack synthesized")
    return "template"
"""


def generated(folder: str, name: str) -> str:
    """A generated module's path (spelt apart: these paths exist in the generated suite only)."""
    return f"tests/{folder}/{name}"


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    """A generated suite with the project's markers, tier hooks and stand-in engine fixtures."""
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    pytester.makeini("[pytest]\nmarkers =\n" + "".join(f"    {marker}\n" for marker in markers))
    pytester.makepyfile(**{"tests/conftest": CONFTEST})
    return pytester


def run(suite: pytest.Pytester, *args: str) -> pytest.RunResult:
    # every generated module's name is its own: "prepend" imports them by their names alone
    return suite.runpytest("-s", "--strict-markers", "-p", "no:cacheprovider", *args)


@pytest.mark.parametrize("tier", ["unit", "repository"])
def test_a_test_without_an_engine_that_asks_for_one_fails_before_it_starts_and_says_where_it_goes(
    suite: pytest.Pytester, tier: str
) -> None:
    suite.makepyfile(
        **{
            f"tests/{tier}/test_{tier}_asks": """
                import pytest

                @pytest.fixture
                def counted(tables):  # the engine reached through a fixture of the module's own
                    return tables

                def test_tables(tables):
                    assert tables == "tables"

                def test_counted(counted):
                    assert counted == "tables"

                def test_moto(moto_aws):  # a fixture this folder cannot even see
                    pass

                def test_template(template):
                    assert template == "template"

                def test_nothing():
                    pass
            """
        }
    )

    result = run(suite)

    result.assert_outcomes(passed=1, errors=4)  # failed at setup
    result.stdout.fnmatch_lines(
        [
            f"*tests/{tier}/test_{tier}_asks.py::test_tables asks for DynamoDB Local (fixtures tables), "
            f"but tests under tests/{tier}/ run on no engine: move it to tests/dynamodb_local/",
            f"*tests/{tier}/test_{tier}_asks.py::test_counted asks for DynamoDB Local (fixtures tables)*",
            f"*tests/{tier}/test_{tier}_asks.py::test_moto asks for moto (fixtures moto_aws)*move it to tests/moto/",
            f"*tests/{tier}/test_{tier}_asks.py::test_template asks for a synthesized stack (fixtures template)*"
            "move it to tests/synth/",
        ]
    )
    assert "DynamoDB Local started" not in result.stdout.str()
    assert "stack synthesized" not in result.stdout.str()
    assert "fixture 'moto_aws' not found" not in result.stdout.str()


def test_a_test_gets_the_engines_of_its_folder_and_its_folders_marker(suite: pytest.Pytester) -> None:
    for tier in TIERS:
        suite.makepyfile(
            **{
                f"tests/{tier}/sub/test_{tier}": f"""
                    def test_marked(request):
                        assert [mark.name for mark in request.node.iter_markers()] == ["{tier}"]
                """
            }
        )
    suite.makepyfile(
        **{
            generated("dynamodb_local", "test_engines"): """
                def test_tables_and_template(tables, template):
                    assert (tables, template) == ("tables", "template")
            """,
            generated("synth", "test_stack"): """
                def test_template(template):
                    assert template == "template"
            """,
        }
    )

    everything = run(suite)
    synth_only = run(suite, "-m", "synth")

    everything.assert_outcomes(passed=len(TIERS) + 2)
    assert "DynamoDB Local started" in everything.stdout.str()
    synth_only.assert_outcomes(passed=2, deselected=len(TIERS))


def test_a_test_module_in_no_tiers_folder_fails_naming_the_tiers(suite: pytest.Pytester) -> None:
    old = generated("integration", "test_old")  # the folder of a layout gone
    suite.makepyfile(**{old: "def test_anything():\n    pass\n"})

    result = run(suite)

    result.assert_outcomes(errors=1)  # failed at setup
    result.stdout.fnmatch_lines(
        [
            f"*{old}.py is in no tier's folder: move it to tests/<tier>/, "
            "one of unit, moto, dynamodb_local, synth, repository*"
        ]
    )


def test_a_module_may_name_its_own_fixture_like_an_engines(suite: pytest.Pytester) -> None:
    suite.makepyfile(
        **{
            generated("unit", "test_own"): """
                import pytest

                @pytest.fixture
                def session():
                    return "a session of this module's own"

                def test_session(session):
                    assert session.endswith("own")
            """
        }
    )

    run(suite).assert_outcomes(passed=1)


def test_this_suites_own_tests_carry_their_folders_marker(request: pytest.FixtureRequest) -> None:
    assert [mark.name for mark in request.node.iter_markers()] == ["unit"]


@dataclass
class Collected:
    """What ``longest_first`` reads of a collected test."""

    nodeid: str


def test_the_longest_modules_run_first_and_each_one_named_is_there() -> None:
    # Given the suite's list of its longest modules: each is a test module of this checkout
    assert [m for m in LONGEST_FIRST if not (ROOT / m).is_file()] == []
    # and tests collected in folder order, two of them of listed modules, each after one it goes before
    first, second = "tests/repository/test_packaging.py", "tests/synth/test_context.py"
    assert LONGEST_FIRST.index(first) < LONGEST_FIRST.index(second)
    here = "tests/unit/test_tiers.py"
    names = [f"{here}::test_a", f"{second}::test_b", f"{first}::test_c", f"{here}::test_d"]
    items = [Collected(name) for name in names]

    # When they are ordered
    longest_first(items)  # type: ignore[arg-type]

    # Then the listed modules come first, in the list's order, then the rest as collected
    assert [item.nodeid.rsplit("::", 1)[1] for item in items] == ["test_c", "test_b", "test_a", "test_d"]
