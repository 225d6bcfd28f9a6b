"""Issue 23: Gustafson's law beside Amdahl's, and Amdahl's speedup at N = inf."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.models import amdahl

FAST = settings(max_examples=60, deadline=None)


# --- Amdahl: factor = inf is the limit -------------------------------------------------------

@pytest.mark.parametrize("f", [0.0, 0.3, 0.8, 0.999, 1.0])
def test_amdahl_at_infinite_factor_is_the_limit(f):
    assert amdahl.amdahl_speedup(f, math.inf) == amdahl.amdahl_limit(f)


def test_amdahl_published_limit_through_infinite_factor():
    # Amdahl (1967): a 40 % sequential overhead halved leaves 20 % serial: "five" at most;
    # Bryant and O'Hallaron (2015), 1.9.1: 60 % improved caps the speedup at 2.5.
    assert amdahl.amdahl_speedup(1 - 0.4 / 2, math.inf) == pytest.approx(5.0, rel=1e-12)
    assert amdahl.amdahl_speedup(0.6, math.inf) == pytest.approx(2.5, rel=1e-12)


@FAST
@given(st.floats(0.0, 0.999))
def test_amdahl_approaches_inf_continuously(f):
    assert amdahl.amdahl_speedup(f, 1e12) == pytest.approx(amdahl.amdahl_speedup(f, math.inf),
                                                           rel=1e-9)


def test_amdahl_negative_infinite_factor_is_refused():
    with pytest.raises(ValueError, match="factor"):
        amdahl.amdahl_speedup(0.5, -math.inf)


# --- Gustafson ---------------------------------------------------------------------------

def test_gustafson_published_hypercube():
    # Gustafson (1988), CACM 31(5) 532: serial share 0.4-0.8 percent on 1024 processors,
    # speedups 1020 and 1016 (the two ends of that range).
    assert round(amdahl.gustafson_speedup(0.004, 1024)) == 1020
    assert round(amdahl.gustafson_speedup(0.008, 1024)) == 1016
    # and Amdahl's fixed-size law at the same serial shares stays near 100-250 ("very few
    # problems will experience even a 100-fold speedup")
    assert amdahl.amdahl_speedup(1 - 0.004, 1024) < 250


@FAST
@given(st.floats(0.0, 1.0), st.floats(1.0, 1e6))
def test_gustafson_bounds(s, n):
    g = amdahl.gustafson_speedup(s, n)
    assert 1.0 - 1e-9 <= g <= n * (1 + 1e-12)
    # weak scaling never loses to strong scaling at the same serial share measured on the
    # parallel run (Amdahl's f on one processor is p'N / (s' + p'N))
    f_serial_machine = (1 - s) * n / (s + (1 - s) * n)
    assert g == pytest.approx(amdahl.amdahl_speedup(f_serial_machine, n), rel=1e-9)


def test_gustafson_limits():
    assert amdahl.gustafson_speedup(0.0, 64) == 64.0
    assert amdahl.gustafson_speedup(1.0, 64) == 1.0
    assert amdahl.gustafson_speedup(0.3, 1) == 1.0


def test_gustafson_oracle_by_counting_work():
    # one processor does the serial part then N parallel parts, one after the other
    s, n = 0.05, 37
    serial_time = s + sum((1 - s) for _ in range(n))
    assert amdahl.gustafson_speedup(s, n) == pytest.approx(serial_time / 1.0)


@pytest.mark.parametrize("kw,match", [
    (dict(serial_fraction=1.5, n_processors=8), "serial_fraction"),
    (dict(serial_fraction=0.1, n_processors=0.5), "n_processors"),
    (dict(serial_fraction=0.1, n_processors=math.nan), "n_processors"),
])
def test_gustafson_bad_input(kw, match):
    with pytest.raises(ValueError, match=match):
        amdahl.gustafson_speedup(**kw)
