"""What the functions run: the Python runtime and the Powertools layer in the synthesized template,
and the function asset (the handlers and zone data, no tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aws_cdk.assertions import Template

from sensor_digest_cdk.lambda_asset import function_asset
from tests.support.templates import resources


def test_every_function_runs_python_3_13_with_the_powertools_layer_built_for_it(template: Template) -> None:
    # 3.13 is the newest Python the unit tier also runs on (make test-unit-py313); layer 36 is Powertools 3.31.1
    functions = [
        f["Properties"] for f in resources(template, "AWS::Lambda::Function").values() if "Layers" in f["Properties"]
    ]
    assert sorted(f["Handler"] for f in functions) == [
        "announcer.handler.handler",
        "api.handler.handler",
        "ingest.handler.handler",
        "summary.handler.handler",
    ]
    for function in functions:
        assert function["Runtime"] == "python3.13"
        assert function["Architectures"] == ["arm64"]
        (layer,) = function["Layers"]
        assert layer["Fn::Sub"].endswith(":017000801446:layer:AWSLambdaPowertoolsPythonV3-python313-arm64:36")


def test_the_function_asset_carries_the_handlers_and_zone_data_but_no_tests(stack_and_template: Any) -> None:
    build = function_asset()  # the folder the synthesized stack's functions were built from
    assert (build / "ingest" / "handler.py").is_file()
    assert (build / "summary" / "handler.py").is_file()
    assert (build / "api" / "handler.py").is_file()
    assert (build / "sensor_digest" / "counting" / "ledger.py").is_file()
    assert (build / "tzdata" / "zoneinfo" / "Asia" / "Tokyo").is_file()
    assert not list(build.rglob("__pycache__"))
    assert not (build / "tests").exists()


def test_every_functions_handler_is_a_module_of_the_asset(template: Template, synth_with: Any) -> None:
    # a handler package left out of HANDLER_PACKAGES synthesizes, and fails only when Lambda imports it
    build = function_asset()
    _, imported = synth_with(importEnabled="true", silenceHours="6")
    handlers = {
        f["Properties"]["Handler"]
        for t in (template, imported)
        for f in resources(t, "AWS::Lambda::Function").values()
        if "Layers" in f["Properties"]
    }
    assert "announcer.handler.handler" in handlers
    for handler in handlers:
        module, _, function = handler.rpartition(".")
        source = build / Path(*module.split(".")).with_suffix(".py")
        assert source.is_file(), handler
        assert f"{function} = " in source.read_text() or f"def {function}(" in source.read_text(), handler
