"""The documentation site's generated parts and the README as a landing page. Engine: none (files,
the deployment model in memory, the benchmark's page renderer; the strict build itself runs in
`make docs`, which `make lint` runs)."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

from bench import goals, pages
from docs_hooks import context_options
from sensor_digest_cdk.context import CONTEXT_FIELDS, STACK_NAME_RULE
from sensor_digest_cdk.rules import context_key
from sensor_digest_cdk.tunables import MEANING, RULES, Tunables

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def readme_links() -> list[str]:
    return [target for target in LINK.findall(README.read_text(encoding="utf-8")) if "://" not in target]


def test_the_readme_stays_under_15_kb() -> None:
    assert README.stat().st_size < 15 * 1024


def test_every_relative_link_in_the_readme_points_to_a_file_that_exists() -> None:
    links = readme_links()
    assert links, "the README links into docs/"
    missing = [t for t in links if not (ROOT / t.split("#")[0]).exists()]
    assert missing == []


def test_the_readme_links_into_the_site_by_its_markdown_sources() -> None:
    into_docs = [t.split("#")[0] for t in readme_links() if t.startswith("docs/") and t != "docs/"]
    pages = [t for t in into_docs if not t.endswith(".png")]
    assert pages
    assert all(t.endswith(".md") for t in pages)


def test_the_readme_shows_a_picture_of_the_page() -> None:
    # The landing page shows what `sensor-digest up` serves (a file of docs/, checked to exist above)
    assert "![The page" in README.read_text(encoding="utf-8")
    assert "docs/page.png" in readme_links()


def test_the_readme_holds_the_two_commands_exactly_as_ci_runs_them() -> None:
    # Given the README's "The two commands" block and CI's script
    text = README.read_text(encoding="utf-8")
    section = text.split("## The two commands", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    ci_lines = {line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()}
    # Then they are make demo and make test, and CI runs each as written
    assert commands == ["make demo", "make test"]
    assert set(commands) <= ci_lines


def test_the_options_table_has_one_row_per_meaning_naming_every_context_key() -> None:
    table = context_options.render_options_table()
    first_cells = [row.split("|")[1] for row in table.splitlines()[2:]]
    named = re.findall(r"`([A-Za-z]+)`", " ".join(first_cells))
    assert sorted(named) == sorted(["stackName", *(context_key(name) for name in CONTEXT_FIELDS)])
    meanings = {f.metadata[MEANING] for f in fields(Tunables) if f.name in CONTEXT_FIELDS}
    assert len(first_cells) == len(meanings) + 1  # and stackName's


def test_every_tunable_says_what_it_means() -> None:
    assert all(f.metadata[MEANING].strip() for f in fields(Tunables))


def test_each_row_says_what_each_of_its_keys_allows_as_the_model_does() -> None:
    rows = context_options.render_options_table().splitlines()[2:]
    rules = {context_key(name): RULES[name] for name in CONTEXT_FIELDS} | {"stackName": STACK_NAME_RULE}
    for key, rule in rules.items():
        [row] = [r for r in rows if f"`{key}`" in r.split(" | ")[0]]
        assert rule.allowed.replace("|", "\\|") in row.split(" | ")[2], key


def test_the_hook_checks_the_table_and_renders_nothing() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert context_options.on_page_markdown(page) == page  # the committed table is the model's
    stale = page.replace("| `removal` |", "| `removalPolicy` |")
    with pytest.raises(ValueError, match=r"stale: run python -m docs_hooks.context_options --write"):
        context_options.on_page_markdown(stale)
    assert context_options.on_page_markdown("# Other page\n") == "# Other page\n"


def test_a_page_without_its_end_marker_cannot_be_written() -> None:
    with pytest.raises(ValueError, match="holds no"):
        context_options.with_table(f"# Configuration\n\n{context_options.MARKER}\n")


def test_the_committed_results_page_is_the_rendering_of_its_results_file() -> None:
    report = json.loads(pages.PAGE.with_suffix(".json").read_text(encoding="utf-8"))
    assert pages.PAGE.read_text(encoding="utf-8") == pages.render(report)


def small_report(**extra: object) -> dict[str, object]:
    result = {
        "workload": "W1",
        "strategy": "a",
        "label": "(a) blog",
        "mode": "raw",
        "history": False,
        "messages_per_s": 700.0,
        "requests_per_message": 1.069,
        "write_units_per_message": 1.069,
        "listed": 0,
        "conflicts": 0,
        "overcount": 3064,
        "undercount": 0,
    }
    return {
        "messages": 1000,
        "date": "2026-11-25T05:40:32+00:00",
        "overrides": {},
        "settings": {"ingest_batch_size": 1000},
        "results": [result],
        **extra,
    }


def test_the_results_page_names_the_runs_date_machine_and_settings() -> None:
    machine = {"arch": "x86_64", "cores": 2, "python": "3.11.7", "engine": "DynamoDB Local"}
    page = pages.render(small_report(machine=machine))
    assert "2026-11-25T05:40:32+00:00" in page
    assert "x86_64, 2 cores, Python 3.11.7, DynamoDB Local" in page
    assert "ingest batch size 1,000" in page
    assert "| W1 real time: 200 sensors, one day (2% late) | (a) blog | raw | 700 | 1.069 |" in page


def test_a_run_at_other_settings_says_so_on_its_page() -> None:
    page = pages.render(small_report(overrides={"ingest_batch_size": 100}))
    assert "NOT THE DEFAULTS: ingest_batch_size=100" in page


def test_writing_the_page_keeps_its_results_file_beside_it(tmp_path: Path) -> None:
    page = pages.write_page(small_report(), tmp_path / "results.md")
    assert json.loads((tmp_path / "results.json").read_text(encoding="utf-8")) == small_report()
    assert "[`results.json`](results.json)" in page.read_text(encoding="utf-8")


def test_an_exactness_goal_names_the_runs_that_missed_and_counts_the_rest() -> None:
    # Given three runs of which one overcounted
    runs = [{"workload": w, "overcount": o, "undercount": 0} for w, o in (("W1", 0), ("W2", 3), ("W3", 0))]
    # Then the goal names that run, counts the others, and is missed; all exact, it says how many
    assert goals.exactness(runs, lambda r: r["workload"]) == ("W2: 3/0, 0/0 over/under in the other 2 run(s)", False)
    assert goals.exactness(runs[:1], lambda r: r["workload"]) == ("0/0 over/under in each of 1 run(s)", True)
