"""Props that do not apply to the mode a pipeline chooses: refused when given as props (one line
each, in the props' own words, before anything is built), and a warning at synth for a shape built
beforehand, which cannot tell a value given from a default. CDK's synthesizer, no AWS."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Annotations, Match, Template

from sensor_digest_cdk import PipelineShape, SensorDigestPipeline, ShapeError
from sensor_digest_cdk.pipeline import NOT_APPLYING_WARNING


@pytest.mark.parametrize(
    ("props", "problem"),
    [
        (
            {"queue_type": "fifo", "ingest_batch_size": 5},
            "prop ingest_batch_size=5 does not apply: queue_type='fifo' reads its queue with fifo_batch_size and "
            "fifo_max_concurrency (Lambda allows a FIFO event source no batching window)",
        ),
        (
            {"fifo_max_concurrency": 20},
            "prop fifo_max_concurrency=20 does not apply: fifo_batch_size and fifo_max_concurrency apply with "
            "queue_type='fifo' only",
        ),
        (
            {"read_capacity": 50},
            "prop read_capacity=50 does not apply: capacity applies with billing='provisioned' only (on-demand "
            "tables have none to set)",
        ),
    ],
)
def test_a_prop_that_does_not_apply_to_the_mode_is_refused_before_anything_is_built(
    props: dict[str, object], problem: str
) -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Readings")
    with pytest.raises(ShapeError) as refused:
        SensorDigestPipeline(stack, "Pipeline", **props)  # type: ignore[arg-type]
    assert refused.value.problems == [problem]
    assert stack.node.try_find_child("Pipeline") is None


def test_props_that_apply_are_built_as_given() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Readings")
    SensorDigestPipeline(stack, "Ordered", queue_type="fifo", fifo_batch_size=5)
    SensorDigestPipeline(stack, "Provisioned", billing="provisioned", read_capacity=50)
    template = Template.from_stack(stack)
    template.has_resource_properties("AWS::Lambda::EventSourceMapping", {"BatchSize": 5})
    template.has_resource_properties(
        "AWS::DynamoDB::Table", {"ProvisionedThroughput": {"ReadCapacityUnits": 50, "WriteCapacityUnits": 5}}
    )


def test_a_shape_built_beforehand_warns_at_synth_of_what_it_ignores() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Readings")
    SensorDigestPipeline(stack, "Ordered", shape=PipelineShape(queue_type="fifo", ingest_batch_size=5))
    SensorDigestPipeline(stack, "Plain", shape=PipelineShape())

    warnings = Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp("does not apply"))

    assert [(w.id, w.entry.data) for w in warnings] == [
        (
            "/Readings/Ordered",
            "ingest_batch_size=5 does not apply and is ignored: queue_type='fifo' reads its queue with "
            f"fifo_batch_size and fifo_max_concurrency (Lambda allows a FIFO event source no batching window) "
            f"[ack: {NOT_APPLYING_WARNING}]",
        )
    ]
