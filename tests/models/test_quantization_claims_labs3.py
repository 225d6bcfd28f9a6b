"""absmax_rms_rounding_error: one weight per block rounds exactly (the quantization lab's claim)."""

import math

import numpy as np
import pytest

from helpers.models import quantization as qz


def test_limits():
    # a large block tends to the uniform model; two weights per block halve the mean square
    assert qz.absmax_rms_rounding_error(1.0, 10**9) == pytest.approx(qz.rms_rounding_error(1.0))
    assert qz.absmax_rms_rounding_error(1.0, 2) == pytest.approx(1 / math.sqrt(24))
    # linear in the step
    assert qz.absmax_rms_rounding_error(3.0, 32) == pytest.approx(3 * qz.absmax_rms_rounding_error(1.0, 32))


@pytest.mark.parametrize("bits, group", [(4, 32), (4, 128), (8, 64)])
def test_against_absmax_quantization_of_random_weights(bits, group):
    """Oracle: quantize a large random matrix with group scales and measure the RMS error."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((512, 4096))
    s = qz.absmax_scales(w, "group", bits=bits, group_size=group)
    err = qz.dequantize(qz.quantize(w, s, bits=bits), s) - w
    step = qz.dequantize(np.ones_like(w), s)
    measured = float(np.sqrt((err ** 2).mean()))
    model = float(qz.absmax_rms_rounding_error(np.sqrt((step ** 2).mean()), group))
    assert measured == pytest.approx(model, rel=0.005)
    # the plain uniform model overestimates by sqrt(G / (G - 1)): 1.6 % at G = 32
    if group == 32:
        assert not measured == pytest.approx(float(qz.rms_rounding_error(np.sqrt((step ** 2).mean()))), rel=0.01)


def test_llama_cpp_q4_0_block():
    # llama.cpp's block_q4_0 holds 32 weights per fp16 scale (ggml-common.h, QK4_0 = 32)
    assert qz.absmax_rms_rounding_error(1.0, 32) == pytest.approx(math.sqrt(31 / 32) / math.sqrt(12))


@pytest.mark.parametrize("bad, name", [(dict(group_size=1), "group_size"),
                                       (dict(group_size=0), "group_size"),
                                       (dict(rms_scale=-1.0), "rms_scale")])
def test_bad_input(bad, name):
    args = dict(rms_scale=1.0, group_size=32) | bad
    with pytest.raises(ValueError, match=name):
        qz.absmax_rms_rounding_error(**args)
