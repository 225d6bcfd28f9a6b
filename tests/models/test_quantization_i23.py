"""Issue 23: the two absmax scale conventions (step amax/127 and its reciprocal) and FP8
per-tensor scaling."""

import math

import numpy as np
import pytest

from helpers.models import quantization as qz


def test_published_int8_convention():
    # Dettmers et al. (2022) 2.1: X_i8 = round(127 X / max|X|): the multiplier 127 / amax
    assert qz.absmax_multiplier(1.0) == 127.0
    w = np.array([[0.5, -1.27], [0.1, 0.2]])
    step = qz.absmax_scales(w, "tensor")
    assert qz.absmax_multiplier(float(np.abs(w).max())) * float(step[0, 0]) == \
        pytest.approx(1.0, rel=1e-15)


def test_both_conventions_give_the_same_codes():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((64, 256))
    amax = float(np.abs(w).max())
    step = qz.absmax_scales(w, "tensor")
    by_step = qz.quantize(w, step)
    by_multiplier = np.clip(np.round(w * qz.absmax_multiplier(amax)), -127, 127)
    differ = by_step != by_multiplier
    # only exact ties, where one rounding of 1/s moves a value across .5, may differ
    frac = np.abs(np.abs(w / step) % 1 - 0.5)
    assert np.all(frac[differ] < 1e-9)
    assert differ.mean() < 1e-3


def test_reading_with_the_wrong_convention_is_off_by_s_squared():
    w = np.array([[0.3, -0.9]])
    step = float(qz.absmax_scales(w, "tensor")[0, 0])
    q = qz.quantize(w, np.array([[step]]))
    wrong = q * qz.absmax_multiplier(0.9)  # multiplied by c instead of s
    right = q * step
    assert wrong / right == pytest.approx(np.full_like(right, 1 / step**2))


def test_published_fp8_maxima_and_margin():
    # Micikevicius et al. (2022) table 1: E4M3 448, E5M2 57344; Transformer Engine: amax maps
    # to 2^-margin * max
    assert qz.fp8_tensor_scale(1.0) == 448.0
    assert qz.fp8_tensor_scale(1.0, "fp8_e5m2") == 57344.0
    for m in range(4):
        assert 10.0 * qz.fp8_tensor_scale(10.0, margin=m) == 448.0 / 2**m


def test_oracle_torch_float8_cast():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this torch has no float8_e4m3fn")
    assert torch.finfo(torch.float8_e4m3fn).max == qz.fp8_tensor_scale(1.0)
    assert torch.finfo(torch.float8_e5m2).max == qz.fp8_tensor_scale(1.0, "fp8_e5m2")
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4096, generator=g, dtype=torch.float32) * 1e-3  # far below fp8's range
    amax = float(x.abs().max())
    s = qz.fp8_tensor_scale(amax)
    x8 = (x * s).to(torch.float8_e4m3fn)
    back = x8.to(torch.float32) / s
    assert float(x8.to(torch.float32).abs().max()) == 448.0  # amax lands on the top value
    assert torch.isfinite(back).all()
    # e4m3 keeps 3 fraction bits: relative error at most 2^-4 for normal values
    normal = (x * s).abs() >= 2.0**-6
    rel = ((back - x).abs() / x.abs())[normal]
    assert float(rel.max()) <= 2.0**-4 + 1e-7
    # without the scale, most of these values would flush into fp8's subnormals or to zero
    unscaled = x.to(torch.float8_e4m3fn).to(torch.float32)
    assert float((unscaled == 0).float().mean()) > 0.3


def test_bad_input():
    with pytest.raises(ValueError, match="amax"):
        qz.fp8_tensor_scale(0.0)
    with pytest.raises(ValueError, match="fmt"):
        qz.fp8_tensor_scale(1.0, "fp8_e3m4")
    with pytest.raises(ValueError, match="margin"):
        qz.fp8_tensor_scale(1.0, margin=-1)
    with pytest.raises(ValueError, match="amax"):
        qz.absmax_multiplier(-1.0)
