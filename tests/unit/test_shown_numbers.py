"""The command line shows a mean or a standard deviation by the rule the page shows it by
(``cli/readings.py``'s ``shown``; the page's ``shownNumber``, held to the same cases in
tests/dynamodb_local/local/test_page_chart_in_browser.py). Engine: none."""

from __future__ import annotations

import json

import pytest

from sensor_digest_tools.cli.readings import shown
from tests.support.shown_numbers import CASES


@pytest.mark.parametrize(("written", "want"), CASES)
def test_a_mean_is_shown_to_15_significant_digits_a_tie_away_from_zero(written: str, want: str) -> None:
    assert shown(json.loads(written)) == want
