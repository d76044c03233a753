"""The faults of ``errors.py`` as ``store/dynamo.py`` chooses them: a refusal is permanent and no
``TransientFault``, so a retry that catches transient faults (or ``RETRYABLE_FAULTS``) never picks
it; what is retried is chosen by the fault's type, whatever its words say."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from sensor_digest.errors import (
    RETRYABLE_FAULTS,
    Contention,
    RefusedWrite,
    RetryableFault,
    StoreFault,
    TransientFault,
)
from sensor_digest.store import dynamo


def client_error(code: str, message: str = "") -> ClientError:
    response: Any = {"Error": {"Code": code, "Message": message}}
    return ClientError(response, "UpdateItem")


def retried(fault: StoreFault, attempts: int = 3) -> int:
    """How many times a loop that retries ``RETRYABLE_FAULTS`` by type runs a call failing with ``fault``."""
    runs = 0
    for attempt in range(attempts):
        runs += 1
        try:
            raise fault
        except RETRYABLE_FAULTS:
            if attempt + 1 == attempts:
                return runs
        except StoreFault:
            return runs
    return runs


def test_a_request_refused_as_invalid_is_a_permanent_refusal_and_no_transient_fault() -> None:
    fault = dynamo.fault_from(client_error("ValidationException", "An operand in the update is not a number"), "Put")
    assert isinstance(fault, RefusedWrite)
    assert isinstance(fault, StoreFault)
    assert not isinstance(fault, TransientFault)
    assert not isinstance(fault, RETRYABLE_FAULTS)
    with pytest.raises(RefusedWrite):  # an ``except TransientFault`` lets it through
        try:
            raise fault
        except TransientFault:
            pytest.fail("a refusal was caught as a transient fault")


def test_an_action_refused_inside_a_transaction_is_a_refusal_too() -> None:
    fault = dynamo.cancellation_fault(["None", "ValidationError"], ["", "Item size has exceeded the maximum"])
    assert isinstance(fault, RefusedWrite) and not isinstance(fault, TransientFault)


def test_a_refusal_is_run_once_by_a_retry_of_retryable_faults() -> None:
    assert retried(RefusedWrite("retryable transport (the words say so, the type does not)")) == 1


@pytest.mark.parametrize("code", sorted(dynamo.RETRYABLE_ERROR_CODES))
def test_every_retryable_code_is_retried_by_its_type_alone(code: str) -> None:
    fault = dynamo.fault_from(client_error(code), "UpdateItem")
    assert isinstance(fault, RetryableFault)
    fault.reason = "no word of it says so"  # the words play no part
    assert retried(fault) == 3


def test_a_transport_error_is_retryable_and_an_unexpected_code_is_not() -> None:
    assert isinstance(dynamo.fault_from(EndpointConnectionError(endpoint_url="http://x"), "GetItem"), RETRYABLE_FAULTS)
    unexpected = dynamo.fault_from(client_error("SomethingNew"), "GetItem")
    assert type(unexpected) is TransientFault and not isinstance(unexpected, RETRYABLE_FAULTS)


def test_a_fault_whose_words_say_retryable_is_not_retried_for_them() -> None:
    assert retried(TransientFault("UpdateItem failed (retryable): ThrottlingException; transport")) == 1
    assert retried(RetryableFault("")) == 3
    assert retried(Contention("")) == 3
