"""Tests for helpers.units: prefixes and display formatting."""

import math

import pytest
from hypothesis import given, strategies as st

from helpers import units


def test_decimal_and_binary_prefixes_differ_as_spec_sheets_and_tools_do():
    assert units.GB == 1e9 and units.GiB == 2**30
    # 80 GB on a datasheet is 74.5 GiB in nvidia-smi's units.
    assert round(80 * units.GB / units.GiB, 1) == 74.5


@pytest.mark.parametrize("value, unit, expected", [
    (3.35e12, "B/s", "3.35 TB/s"),
    (989.4e12, "FLOP/s", "989 TFLOP/s"),
    (1e-6, "s", "1 µs"),
    (2.5e-9, "s", "2.5 ns"),
    (999.96e9, "B", "1 TB"),   # rounding carries into the next prefix
    (-4e6, "B", "-4 MB"),
    (0.0, "W", "0 W"),
])
def test_fmt_si_examples(value, unit, expected):
    assert units.fmt_si(value, unit) == expected


@given(st.floats(min_value=1e-11, max_value=1e17, allow_nan=False))
def test_fmt_si_round_trips_to_three_significant_digits(x):
    text = units.fmt_si(x, "B")
    number, unit = text.split(" ")
    prefix = unit[:-1]
    scale = {"P": 1e15, "T": 1e12, "G": 1e9, "M": 1e6, "k": 1e3, "": 1.0, "m": 1e-3, "µ": 1e-6,
             "n": 1e-9, "p": 1e-12}[prefix]
    assert math.isclose(float(number) * scale, x, rel_tol=5e-3)


def test_fmt_time_switches_to_minutes_hours_days():
    assert units.fmt_time(90) == "1.5 min"
    assert units.fmt_time(2 * units.hour) == "2 h"
    assert units.fmt_time(3 * units.day) == "3 days"


def test_fmt_bytes_binary():
    assert units.fmt_bytes(3 * units.GiB, binary=True) == "3 GiB"
    assert units.fmt_bytes(512, binary=True) == "512 B"


def test_fmt_count_words():
    assert units.fmt_count(8.03e9) == "8.03 billion"
    assert units.fmt_count(12_345) == "12,345"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_formatting_rejects_non_finite(bad):
    with pytest.raises(ValueError, match="finite"):
        units.fmt_si(bad, "B")
    with pytest.raises(ValueError, match="finite"):
        units.fmt_time(bad)


def test_fmt_si_rejects_zero_digits():
    with pytest.raises(ValueError, match="digits"):
        units.fmt_si(1.0, "B", digits=0)


def test_shown_is_the_text_the_page_prints_and_hides_the_last_digits():
    import numpy as np

    from helpers.units import shown

    # The two CPUs of issue 15: the same bits-per-byte change, different in the 3rd digit.
    assert shown(0.009663900238887635, ".2f") == shown(0.009652992902275948, ".2f") == "0.01"
    assert shown(np.float64(1.6200334034822907), ".4f") == shown(1.62003323149964, ".4f")
    assert shown(np.int64(2048), "d") == "2048" and shown(2048, ",d") == "2,048"
    for x, spec in [(3.14159, ".3g"), (0.5, ".0%"), (-1e-9, "+.2e"), (1234.5, ",.1f")]:
        assert shown(x, spec) == format(x, spec)


@pytest.mark.parametrize("value, spec, match", [
    ("1.5", ".2f", "value"), (True, ".2f", "value"), (None, ".2f", "value"),
    (1.5, "", "spec"), (1.5, 3, "spec"), (1.5, "d", "cannot format"),
])
def test_shown_rejects_bad_input(value, spec, match):
    from helpers.units import shown

    with pytest.raises(ValueError, match=match):
        shown(value, spec)


def test_fmt_sig_is_plain_in_table_range_and_rounds_like_g():
    from helpers.units import fmt_sig

    for v in (1741.2, 0.02456, 4.3, 12.0, 999.96, 123456.0, 0.00012345):
        assert float(fmt_sig(v)) == float(f"{v:.3g}"), v
        assert "e" not in fmt_sig(v)
    assert fmt_sig(999.96) == "1000" and fmt_sig(-0.0) == "0" and "e" in fmt_sig(2e7)
    with pytest.raises(ValueError, match="digits"):
        fmt_sig(1.0, 0)
    with pytest.raises(ValueError, match="value"):
        fmt_sig(float("nan"))


def test_fmt_pct_never_prints_a_signed_zero():
    from helpers.units import fmt_pct

    assert [fmt_pct(x, signed=True) for x in (-0.004, 0.004, -0.006, 0.0)] == ["0%", "0%", "-1%", "0%"]
    assert fmt_pct(0.1234, digits=1) == "12.3%"
    with pytest.raises(ValueError, match="digits"):
        fmt_pct(0.1, digits=-1)
