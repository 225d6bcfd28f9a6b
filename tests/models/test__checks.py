"""Tests of helpers.models._checks, and of the bad calls issue 15 (item 4) named.

Each case here failed before the checks were made complete: a silently wrong result, an
obscure crash or a hang. ``test_bad_input.py`` sweeps every public function; these pin the
examples the issue gave, with the message each must carry.
"""

import math
import signal

import numpy as np
import pytest

from helpers import specs
from helpers.models import _checks
from helpers.models import (attention, checkpointing, gemm, gpu_peaks, kv_paging, memory_access,
                            memory_hierarchy, numerics, quantization, queueing, scheduling, stats)

# --- the checking module ------------------------------------------------------------------

WRONG_TYPES = [True, False, np.bool_(True), "1e12", "3", None, object(), [1.0], {"a": 1}]


def _id(value) -> str:
    """A test id that is the same in every process (an object's repr carries its address, and
    pytest-xdist's workers must collect identical ids)."""
    return type(value).__name__ if type(value) is object else repr(value)


@pytest.mark.parametrize("value", WRONG_TYPES, ids=_id)
@pytest.mark.parametrize("check", [
    lambda v: _checks.positive("x", v),
    lambda v: _checks.positive("x", v, allow_zero=True),
    lambda v: _checks.fraction("x", v),
    lambda v: _checks.positive_int("x", v),
    lambda v: _checks.integer("x", v),
    lambda v: _checks.real("x", v),
], ids=["positive", "positive0", "fraction", "positive_int", "integer", "real"])
def test_scalar_checks_refuse_wrong_types_by_name(check, value):
    with pytest.raises(ValueError, match=r"^x must be"):
        check(value)


@pytest.mark.parametrize("value", [1, 2.5, np.float64(2.5), np.int64(3), np.float32(0.5),
                                   np.array(2.0)], ids=repr)
def test_scalar_checks_accept_python_and_numpy_numbers(value):
    assert _checks.positive("x", value) == float(value)
    assert _checks.real("x", -value) == -float(value)


def test_positive_int_caps_counts_at_the_float64_exact_range():
    assert _checks.positive_int("n", 2**53) == 2**53
    with pytest.raises(ValueError, match=r"n must be an integer in \[1, 9007199254740992\]"):
        _checks.positive_int("n", 2**53 + 1)
    with pytest.raises(ValueError, match=r"n must be an integer >= 1, got 0"):  # old wording kept
        _checks.positive_int("n", 0)


def test_positive_array_refuses_strings_none_and_bools():
    for bad in ("1e12", None, [1.0, None], [True, 2.0], ["1", "2"]):
        with pytest.raises(ValueError, match="^sizes must be"):
            _checks.positive_array("sizes", bad)
    assert _checks.positive_array("sizes", [1, 2]).tolist() == [1.0, 2.0]


def test_one_of_same_length_sequence_boolean_real_array():
    with pytest.raises(ValueError, match=r"precision must be one of \('a', 'b'\), got None"):
        _checks.one_of("precision", None, ("a", "b"))
    with pytest.raises(ValueError, match="a and b must have the same length, got 2 and 1"):
        _checks.same_length("a", [1, 2], "b", [1])
    with pytest.raises(ValueError, match="xs must be a sequence"):
        _checks.sequence("xs", None)
    with pytest.raises(ValueError, match="flag must be True or False, got 'yes'"):
        _checks.boolean("flag", "yes")
    with pytest.raises(ValueError, match="x must hold finite numbers"):
        _checks.real_array("x", [0.0, math.inf])
    _checks.real_array("x", [0.0, -math.inf], allow_neg_inf=True)


# --- the examples ---------------------------------------------------------------------

W = np.array([[0.5, -1.0, 0.0]])


@pytest.mark.parametrize("scales", [np.array([[-0.01]]), np.array([[math.nan]])], ids=["neg", "nan"])
def test_quantize_refuses_a_negative_or_nan_scale(scales):  # it used to treat them as 1
    with pytest.raises(ValueError, match="scales must be finite and >= 0"):
        quantization.quantize(W, scales)


def test_quantize_and_dequantize_refuse_missing_scales():  # AttributeError before
    with pytest.raises(ValueError, match="scales must be a 2-D array"):
        quantization.quantize(W, None)
    with pytest.raises(ValueError, match="scales must be a 2-D array"):
        quantization.dequantize(W, None)


@pytest.mark.parametrize("precision", ["fp7", None, 1.0])
def test_clock_for_an_unknown_precision_is_refused(precision):  # it returned the boost clock
    with pytest.raises(ValueError, match="precision must be one of"):
        gpu_peaks.clock_for_precision_hz(specs.H100_SXM, precision)


def test_time_sliced_completion_is_never_negative():  # returned w - ((k-1) q + k s) < 0
    t = scheduling.time_sliced_completion_s(work_s=1e-13, n_tenants=4, slice_s=1.0,
                                            switch_s=1e-3)
    assert t == 1e-13
    assert scheduling.time_sliced_completion_s(work_s=1.0, n_tenants=4, slice_s=1e300) == 1.0


def test_warp_addresses_do_not_wrap_int64():  # they wrapped into negative addresses
    with pytest.raises(ValueError, match="must be below 2\\*\\*63"):
        memory_access.warp_addresses_bytes(stride_elements=2**40, bytes_per_element=2**20)
    a = memory_access.warp_addresses_bytes(stride_elements=2**30, bytes_per_element=2**20)
    assert a.min() >= 0 and a[-1] == 31 * 2**50


def test_round_to_format_refuses_none_but_rounds_nan():  # None came back as NaN
    with pytest.raises(ValueError, match="x must hold numbers"):
        numerics.round_to_format(None, "bf16")
    assert math.isnan(numerics.round_to_format(math.nan, "bf16"))  # NaN is a bf16 value


@pytest.mark.parametrize("kwargs", [dict(m=math.nan), dict(m=math.inf), dict(ell=math.nan),
                                    dict(block=np.array([0.0, math.nan]))], ids=repr)
def test_online_softmax_update_refuses_nan(kwargs):  # NaN passed through
    args = dict(m=0.0, ell=1.0, block=np.array([0.0, 1.0])) | kwargs
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=f"^{name} must"):
        attention.online_softmax_update(**args)
    m, ell = attention.online_softmax_update(-math.inf, 0.0, np.array([0.0, -math.inf]))
    assert (m, ell) == (0.0, 1.0)  # an empty history and a masked score stay valid


def test_kv_utilization_refuses_lists_of_different_lengths():  # it summed them
    with pytest.raises(ValueError, match="used_tokens and reserved_tokens must have the same"):
        kv_paging.kv_utilization([10, 20], [2048])


@pytest.mark.parametrize("value", ["1e12", True])
def test_positive_refuses_a_numeric_string_and_a_bool(value):  # both were accepted
    with pytest.raises(ValueError, match="x must be a finite number in"):
        _checks.positive("x", value)


def test_empty_cache_list_is_refused_not_an_index_error():
    with pytest.raises(ValueError, match="cache_bytes must be a sequence of at least 1"):
        memory_hierarchy.plateau_latencies_s([1e3], [1e-9], [])


def test_checkpoint_overflow_is_a_clear_error():  # OverflowError: math range error
    with pytest.raises(ValueError, match="mtbf_s"):
        checkpointing.goodput(1e300, 1.0, 1.0, 3600.0)


def test_seed_must_be_an_integer():  # None gave a different interval on every call
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        stats.bootstrap_ci([1.0, 2.0, 3.0, 4.0], seed=None)


class _Hang(Exception):
    pass


def _raise_hang(signum, frame):
    raise _Hang


@pytest.mark.parametrize("call", [
    lambda: queueing.erlang_b(10**9, 5.0),
    lambda: queueing.erlang_c(10**9, 5.0),
    lambda: queueing.mmc_mean_wait_s(1.0, 2.0, 10**9),
    lambda: queueing.mmck_blocking_probability(1.0, 2.0, 1, 10**9),
    lambda: gemm.grouped_tile_order(10**6, 10**6, 8),
    lambda: stats.bootstrap_ci([1.0, 2.0, 3.0], n_resamples=10**9),
], ids=["erlang_b", "erlang_c", "mmc", "mmck", "tile_order", "bootstrap"])
def test_huge_sizes_are_refused_at_once(call):  # these ran for hours
    old = signal.signal(signal.SIGALRM, _raise_hang)
    signal.setitimer(signal.ITIMER_REAL, 2.0)
    try:
        with pytest.raises(ValueError, match="at most|in \\["):
            call()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_erlang_b_still_computes_large_valid_server_counts():
    b = queueing.erlang_b(queueing.MAX_SERVERS, queueing.MAX_SERVERS * 0.9)
    assert 0.0 <= b < 1e-3
