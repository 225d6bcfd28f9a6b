"""helpers.bench.fusion: the unfused softmax is the softmax, and the measurement is checked."""

import pytest
import torch

from helpers.bench import fusion


def test_unfused_softmax_equals_torch_softmax_in_float64():
    x = torch.randn(7, 300, dtype=torch.float64) * 50
    assert torch.allclose(fusion.unfused_softmax(x), torch.softmax(x, dim=-1), atol=1e-15)


def test_measurement_times_both_and_rejects_bad_sizes():
    res = fusion.measure_softmax_fusion([1 << 16], cols=256, budget_s=0.01)
    assert res[0]["rows"] == 64 and res[0]["unfused_s"] > 0 and res[0]["fused_s"] > 0
    with pytest.raises(ValueError):
        fusion.measure_softmax_fusion([100], cols=256)
    with pytest.raises(ValueError):
        fusion.measure_softmax_fusion([1 << 16], cols=0)
