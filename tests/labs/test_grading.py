"""Verdicts: right answers pass, each kind of wrong answer fails with a reason, noise is inconclusive."""

import pytest
import torch

from helpers.labs.grading import Verdict, check_outputs, check_performance


def inputs(gen):
    return (torch.randn(100, generator=gen), torch.randn(100, generator=gen))


def add_into(a, b, out):
    out.copy_(a + b)


def test_a_correct_function_passes_and_prints_a_stable_line():
    v = check_outputs(lambda a, b: a + b, lambda a, b: a + b, inputs, name="add")
    assert v.passed and str(v) == "PASS add: matches a float64 reference on 3 fresh random inputs"


def test_wrong_values_fail_with_the_worst_element():
    v = check_outputs(lambda a, b: a - b, lambda a, b: a + b, inputs, name="add")
    assert v.status == "FAIL" and "wrong values" in str(v) and "worst" in str(v)


def test_unwritten_outputs_are_caught_by_poisoning():
    def half(a, b, out):
        out[:50] = a[:50] + b[:50]  # forgets the tail
    v = check_outputs(half, lambda a, b: a + b, inputs, name="add", make_output=lambda a, b: torch.empty_like(a))
    assert v.status == "FAIL" and "50 of 100 output elements left unwritten" in str(v)
    ok = check_outputs(add_into, lambda a, b: a + b, inputs, name="add",
                       make_output=lambda a, b: torch.empty_like(a))
    assert ok.passed


def test_a_cached_answer_fails_on_fresh_inputs():
    cache = {}

    def cached(a, b):
        return cache.setdefault("r", a + b)
    assert check_outputs(cached, lambda a, b: a + b, inputs, name="add").status == "FAIL"


def test_crashes_shapes_and_types_are_reported():
    assert "raised ZeroDivisionError" in str(check_outputs(lambda a, b: 1 / 0, lambda a, b: a, inputs, name="x"))
    assert "shape" in str(check_outputs(lambda a, b: a[:3], lambda a, b: a, inputs, name="x"))
    assert "expected a tensor" in str(check_outputs(lambda a, b: 3.0, lambda a, b: a, inputs, name="x"))


def test_float32_tolerance_rejects_half_precision_rounding_errors():
    v = check_outputs(lambda a, b: (a.half() + b.half()).float(), lambda a, b: a + b, inputs, name="add")
    assert v.status == "FAIL"


def test_all_zero_inputs_are_refused():
    with pytest.raises(ValueError, match="all-zero"):
        check_outputs(lambda a: a, lambda a: a, lambda g: (torch.zeros(4),), name="z")
    with pytest.raises(ValueError, match="trials"):
        check_outputs(lambda a: a, lambda a: a, inputs, name="z", trials=0)


def test_require_raises_on_fail_only(capsys):
    Verdict("ok", "PASS", ["fine"]).require()
    Verdict("noisy", "INCONCLUSIVE", ["spread"]).require()
    with pytest.raises(AssertionError, match="FAIL bad: reason"):
        Verdict("bad", "FAIL", ["reason"]).require()
    assert capsys.readouterr().out.splitlines() == ["PASS ok: fine", "INCONCLUSIVE noisy: spread",
                                                    "FAIL bad: reason"]
    with pytest.raises(ValueError):
        Verdict("x", "MAYBE")


def test_performance_verdicts():
    assert check_performance(1.0, 0.9, name="k", spread=0.02).passed
    fail = check_performance(1.0, 0.3, name="k", spread=0.02, min_fraction=0.5)
    assert fail.status == "FAIL" and "falls short of 50%" in str(fail)
    assert check_performance(1.0, 0.9, name="k", spread=0.5).status == "INCONCLUSIVE"
    with_ref = check_performance(1.0, 0.9, name="k", spread=0.0, reference_s=1.0)
    assert "H200 reference reaches 90%" in str(with_ref)
    for bad in (dict(measured_s=0, bound_s=1), dict(measured_s=1, bound_s=-1)):
        with pytest.raises(ValueError):
            check_performance(**bad, name="k", spread=0.0)
    with pytest.raises(ValueError):
        check_performance(1, 1, name="k", spread=0.0, min_fraction=1.5)


def test_a_time_below_the_physical_floor_fails_as_a_measurement_error():
    # 4% below the floor is within clock boost and datasheet rounding; 10% below is impossible
    assert check_performance(0.96, 0.9, name="k", spread=0.02, floor_s=1.0).passed
    fail = check_performance(0.90, 0.9, name="k", spread=0.02, floor_s=1.0,
                             floor_what="the copy of its bytes")
    assert fail.status == "FAIL" and "measurement error" in str(fail)
    assert "the copy of its bytes" in str(fail)
    # checked before the spread: an impossible time is not merely noisy
    assert check_performance(0.5, 0.9, name="k", spread=0.9, floor_s=1.0).status == "FAIL"
    with pytest.raises(ValueError, match="floor_s"):
        check_performance(1.0, 0.9, name="k", spread=0.0, floor_s=0.0)
