"""The layers read one way: no import cycle among the modules of ``functions/``, ``infra/`` and ``src/``
(every import counts, those under ``TYPE_CHECKING`` and inside functions too); the Lambda core's
modules import only their own layer and those below it (``LAYERS``: handlers, the Lambda entry,
services, counting, the domain, the store, the base); and the construct reaches nothing of the
Lambda core's counting, ingest or store, so that the deployment shape loads no more than it needs (no
botocore, no Powertools); and mypy follows every ``aws_cdk`` module they import (pyproject.toml
skips the rest). Engine: none (reads the sources with ``ast``; one import of the shape in
a fresh interpreter)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("functions", "infra", "src")
"""The roots whose modules form the graph (each a folder on ``sys.path``)."""
CHECKED = ("functions", "infra", "src")
"""The roots held to no cycle (a cycle through one of their modules fails)."""
CORE_BELOW_INFRA = ("sensor_digest.ingest", "sensor_digest.counting", "sensor_digest.store")
"""What the construct imports nothing of, at any depth,"""
TABLE_LAYOUT = "sensor_digest.store.schema"
"""but the tables' layout, which the constructs read as the core names it (the core's one
owner of attribute names and key schemas)."""


def modules() -> dict[str, tuple[str, Path]]:
    """Every module of the sources: its dotted name, its root and its file."""
    found = {}
    for root in SOURCES:
        for path in (ROOT / root).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT / root).with_suffix("").parts).removesuffix(".__init__")
            found[name] = (root, path)
    return found


def imported(source: str, package: str, known: set[str]) -> Iterator[str]:
    """The modules of ``known`` that ``source`` (a module of ``package``) imports, anywhere in it."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([base] if base else [])])
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for dotted in names:
            module = dotted
            while module and module not in known:  # a name within a module: the module
                module = module.rpartition(".")[0]
            if module:
                yield module


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    edges: dict[str, set[str]] = {}
    for name, (_, path) in found.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges[name] = set(imported(path.read_text(encoding="utf-8"), package, known)) - {name}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            component.append(v)
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def reachable(edges: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for w in edges[todo.pop()] - seen:
            seen.add(w)
            todo.append(w)
    return seen


LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("handlers", ("ingest", "summary", "api", "silence", "history", "announcer")),  # functions/<name>/handler.py
    ("the Lambda entry", ("sensor_digest.entry",)),
    (
        "services",
        (
            "sensor_digest.ingest",
            "sensor_digest.summary",
            "sensor_digest.api",
            "sensor_digest.silence",
            "sensor_digest.history",
            "sensor_digest.alarms.announce",
        ),
    ),
    ("counting", ("sensor_digest.counting",)),
    (
        "the domain",
        (
            "sensor_digest.messages",
            "sensor_digest.timestamps",
            "sensor_digest.zones",
            "sensor_digest.characters",
            "sensor_digest.dead_letter_format",
            "sensor_digest.profiles",
            "sensor_digest.registry",
            "sensor_digest.silence.rules",
            "sensor_digest.config",
            "sensor_digest.environment",
            "sensor_digest.stream_filter",
            "sensor_digest.upsert",
            "sensor_digest.alarms",
        ),
    ),
    ("the store", ("sensor_digest.store",)),
    (
        "the base",
        (
            "sensor_digest",
            "sensor_digest.errors",
            "sensor_digest.backoff",
            "sensor_digest.names",
            "sensor_digest.exact_json",
        ),
    ),
)
"""The Lambda core from the top down: a module belongs to the layer of its longest prefix here, and
imports its own layer and those below only (``sensor_digest.logs`` and its like: the base)."""


def layer_of(module: str) -> int:
    """The index in ``LAYERS`` of ``module``'s layer (by its longest prefix; the base by default)."""
    best, length = len(LAYERS) - 1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = index, len(prefix)
    return best


def test_the_lambda_core_imports_down_its_layers_only() -> None:
    edges = graph()
    core = {name for name, (root, _) in modules().items() if root == "functions"}
    upward = sorted(
        f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
        for a in core
        for b in edges[a] & core
        if layer_of(b) < layer_of(a)
    )
    assert upward == []
    assert layer_of("sensor_digest.store.day_writes") > layer_of("sensor_digest.counting.ledger")
    assert layer_of("sensor_digest.silence.rules") > layer_of("sensor_digest.silence.check")


def test_the_layer_check_sees_an_import_that_climbs() -> None:
    # a store module that imported the counters would be one
    assert layer_of("sensor_digest.store.schema") > layer_of("sensor_digest.counting.base")
    assert layer_of("ingest.handler") == 0 and layer_of("sensor_digest.logs") == len(LAYERS) - 1


def test_no_import_cycle_runs_through_the_lambda_core_infra_or_the_command_line() -> None:
    edges = graph()
    roots = {name: root for name, (root, _) in modules().items()}
    assert len(edges) > 100 and edges["sensor_digest_cdk.pipeline"]  # the tree and its imports were found
    assert [c for c in cycles(edges) if any(roots[m] in CHECKED for m in c)] == []


def test_the_cycle_finder_finds_a_cycle_of_type_only_imports() -> None:
    # pipeline <-> pipeline_parts was one: the parts named the pipeline under TYPE_CHECKING only
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [["a", "b", "c"]]
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.a import A\n"
    assert list(imported(source, "p", {"p", "p.a"})) == ["p.a"]
    inside = "def f():\n    from p import a\n    import p.a.x\n"
    assert list(imported(inside, "p", {"p", "p.a"})) == ["p.a", "p.a"]


def test_the_construct_reaches_nothing_of_counting_ingest_or_store_but_the_table_layout() -> None:
    edges = graph()
    infra = [name for name, (root, _) in modules().items() if root == "infra"]
    reached = {m for name in infra for m in reachable(edges, name)} - {TABLE_LAYOUT}
    assert sorted(m for m in reached if m.startswith(CORE_BELOW_INFRA)) == []
    assert "sensor_digest_cdk.tunables" in infra and TABLE_LAYOUT in reachable(edges, "sensor_digest_cdk.pipeline")


LOADED = """
import json, sys
sys.path[:0] = ["functions", "infra"]
import sensor_digest_cdk, sensor_digest_cdk.context, sensor_digest_cdk.props_writer
heavy = ("botocore", "boto3", "aws_lambda_powertools", "aws_cdk", "sensor_digest.ingest", "sensor_digest.counting",
         "sensor_digest.store")
print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))))
"""


def test_importing_the_shape_loads_no_counting_ingest_store_botocore_or_powertools() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LOADED], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def cdk_modules_imported(tree: ast.AST) -> Iterator[str]:
    """The ``aws_cdk`` modules a source imports (``import aws_cdk.x``, ``from aws_cdk import x``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == "aws_cdk")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "aws_cdk":
            yield node.module
            if node.module == "aws_cdk":
                yield from (f"aws_cdk.{a.name}" for a in node.names if a.name.startswith("aws_"))


def test_mypy_follows_every_aws_cdk_module_the_checked_code_imports() -> None:
    # Given mypy's settings: aws-cdk-lib skipped (read as Any) but for the modules named followed
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    followed = {m for o in mypy["overrides"] if o["follow_imports"] == "normal" for m in o["module"]}
    # When every aws_cdk module the packages mypy checks import is listed
    sources = [
        path
        for package in mypy["packages"]
        for root in mypy["mypy_path"]
        if (ROOT / root / package).is_dir()
        for path in (ROOT / root / package).rglob("*.py")
    ]
    imports = {m for path in sources for m in cdk_modules_imported(ast.parse(path.read_text(encoding="utf-8")))}
    # Then each is followed, so that a new one is checked rather than silently Any
    assert sources and "aws_cdk.aws_lambda" in imports
    assert sorted(imports - followed) == []
