"""The cases of the one rule by which the command line and the page show a mean or a standard
deviation (docs/readings.md#reading-them): each is the JSON number the read API writes and the text
both must show. ``tests/unit/test_shown_numbers.py`` holds the command line to them,
``tests/dynamodb_local/local/test_page_chart_in_browser.py`` the page."""

from __future__ import annotations

CASES = [
    ("21.166666666666668", "21.1666666666667"),  # 15 significant digits, the 16th rounding up
    ("14.587963040000002", "14.58796304"),  # a float's noise past them dropped, no trailing zeros
    ("0.30000000000000004", "0.3"),
    ("7.0", "7"),  # an hour of one value shows it as sent, not 7.00
    ("8.833333", "8.833333"),  # ... and not 8.83333300
    ("999999999.999999", "999999999.999999"),  # the largest value of the grid, every digit
    ("-999999999.999999", "-999999999.999999"),
    ("1.000000000000005", "1.00000000000001"),  # a tie rounds away from zero (toFixed: 1.00000000000000)
    ("-1.000000000000005", "-1.00000000000001"),
    ("0.1234567890123445", "0.123456789012345"),  # away from zero, not to even (...344)
    ("99.99999999999999", "100"),  # the carry moves the point
    ("123456789.12345679", "123456789.123457"),
    ("3.3333333333333335e-07", "0.000000333333333333333"),  # an exponent of JSON's, in plain digits
    ("1e-06", "0.000001"),
    ("0.0", "0"),
    ("-0.0", "0"),
]
