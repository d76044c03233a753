"""Every metric a pipeline publishes and graphs is its own: two pipelines in one stack, or two stacks
of the app, set their functions' ``SENSOR_DIGEST_PIPELINE`` apart, and each dashboard graphs its own
pipeline's series of the functions' metrics. Template tests on CDK's synthesizer (no AWS)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template
from constructs import Construct

from sensor_digest import names
from sensor_digest_cdk import SensorDigestPipeline
from tests.support.templates import resources


def pipeline_of_functions(template: Template) -> dict[str, str]:
    """Each function's handler and logical id to its ``SENSOR_DIGEST_PIPELINE``."""
    return {
        f"{logical_id} {f['Properties']['Handler']}": f["Properties"]["Environment"]["Variables"].get(
            names.PIPELINE_ENV
        )
        for logical_id, f in resources(template, "AWS::Lambda::Function").items()
    }


def custom_metrics(dashboard: dict[str, Any]) -> list[list[Any]]:
    """The functions' own metrics a dashboard graphs (namespace SensorDigest), as its body lists them
    (references to other resources stand as ``<token>``)."""
    body = dashboard["Properties"]["DashboardBody"]
    parts = [body] if isinstance(body, str) else body["Fn::Join"][1]
    body = json.loads("".join(p if isinstance(p, str) else "<token>" for p in parts))
    return [
        metric
        for widget in body["widgets"]
        for metric in widget["properties"].get("metrics", [])
        if metric[0] == names.METRICS_NAMESPACE
    ]


def dimensions(metric: list[Any]) -> dict[str, str]:
    """A dashboard metric's dimensions: ``[namespace, name, key, value, ..., {options}]``."""
    pairs = [part for part in metric[2:] if isinstance(part, str)]
    return dict(zip(pairs[::2], pairs[1::2], strict=True))


def test_two_pipelines_in_one_stack_publish_and_graph_their_own_metrics() -> None:
    # Given two pipelines in one stack of a user's app
    app = cdk.App()
    stack = cdk.Stack(app, "Readings")
    SensorDigestPipeline(stack, "Plain")
    SensorDigestPipeline(stack, "Ordered", queue_type="fifo")
    template = Template.from_stack(stack)

    # Then each function publishes under its pipeline's name, four functions each
    by_function = pipeline_of_functions(template)
    assert sorted(by_function.values()) == ["Readings/Ordered"] * 4 + ["Readings/Plain"] * 4
    assert all(value == "Readings/Plain" for key, value in by_function.items() if key.startswith("Plain"))
    # And each dashboard graphs its own pipeline's series of every custom metric, none of the other's
    graphed = {  # by the construct id each dashboard's logical id begins with
        logical_id.split("Monitoring")[0]: custom_metrics(dashboard)
        for logical_id, dashboard in resources(template, "AWS::CloudWatch::Dashboard").items()
    }
    assert set(graphed) == {"Plain", "Ordered"}
    for prefix, metrics in graphed.items():
        assert metrics, prefix
        assert {dimensions(m)[names.PIPELINE_DIMENSION] for m in metrics} == {f"Readings/{prefix}"}
        assert all(set(dimensions(m)) == {"service", names.PIPELINE_DIMENSION} for m in metrics)


def test_two_pipelines_each_named_default_in_scopes_of_their_own_are_told_apart() -> None:
    # Given two teams' scopes in one stack, each holding a pipeline with the construct id the app's own
    # pipeline uses (found in review: both were named by the stack alone, their metrics summed)
    app = cdk.App()
    stack = cdk.Stack(app, "Readings")
    first = SensorDigestPipeline(Construct(stack, "TeamA"), "Default")
    second = SensorDigestPipeline(Construct(stack, "TeamB"), "Default")

    # Then each keeps its path in its name, and its functions publish under it
    assert (first.pipeline_name, second.pipeline_name) == ("Readings/TeamA/Default", "Readings/TeamB/Default")
    values = pipeline_of_functions(Template.from_stack(stack)).values()
    assert sorted(values) == ["Readings/TeamA/Default"] * 4 + ["Readings/TeamB/Default"] * 4


def test_two_stacks_of_the_app_publish_and_graph_their_own_metrics(synth_with: Callable[..., Any]) -> None:
    (_, default), (_, staging) = synth_with(), synth_with(stackName="SensorDigestStaging")

    for template, name in ((default, "SensorDigest"), (staging, "SensorDigestStaging")):
        assert set(pipeline_of_functions(template).values()) == {name}
        [dashboard] = resources(template, "AWS::CloudWatch::Dashboard").values()
        metrics = custom_metrics(dashboard)
        assert len(metrics) == len(names.INGEST_METRICS) + 3  # ingest's outcomes, the summary's three
        assert {dimensions(m)[names.PIPELINE_DIMENSION] for m in metrics} == {name}


def test_a_construct_path_cloudwatch_cannot_name_is_refused_in_one_line() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Readings")
    with pytest.raises(ValueError, match="CloudWatch takes at most 255 ASCII characters; use construct ids in ASCII"):
        SensorDigestPipeline(stack, "Zählerstände")
