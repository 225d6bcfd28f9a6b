"""helpers.nn.quantize: QuantLinear layers made with the book's absmax quantizers, swapped into
the book's model; invariants, an independent oracle (a plain loop over rows), and the bytes."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.models import quantization as qz
from helpers.nn import quantize as nq
from helpers.nn import tinylm


@pytest.fixture(scope="module")
def draft():
    return tinylm.load("book-draft")


@pytest.mark.parametrize("name", sorted(nq.SCHEMES))
def test_dequantized_weight_is_within_half_a_step(name):
    g = torch.Generator().manual_seed(0)
    w = torch.randn(24, 128, generator=g) * torch.logspace(-2, 0, 24)[:, None]
    layer = nq.QuantLinear(w, name)
    s = qz.dequantize(torch.ones_like(w), layer.scales.float())
    err = (layer.dequantized_weight() - w).abs()
    assert bool((err <= s / 2 * (1 + 1e-3) + 1e-12).all())
    codes = layer.codes()
    assert codes.dtype == torch.int8 and int(codes.abs().max()) <= qz.qmax(layer.scheme.bits)


def test_int8_channel_matches_a_loop_over_rows():
    """Oracle: one row at a time, scale = max|row| / 127 in fp16, code = round(w / scale)."""
    g = torch.Generator().manual_seed(1)
    w = torch.randn(8, 40, generator=g, dtype=torch.float64) * 0.05
    layer = nq.QuantLinear(w, "int8-channel")
    for r in range(8):
        s = float(torch.tensor(float(w[r].abs().max()) / 127, dtype=torch.float16))
        want = [max(-127, min(127, round(float(v) / s))) for v in w[r]]
        assert layer.codes()[r].tolist() == want
        assert float(layer.scales[r, 0]) == s


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 64).map(lambda n: 2 * n), st.integers(1, 9), st.integers(0, 2**31))
def test_int4_packing_round_trips(half_k, n, seed):
    g = torch.Generator().manual_seed(seed)
    codes = torch.randint(-7, 8, (n, half_k), generator=g, dtype=torch.int8)
    packed = nq._pack_int4(codes)
    assert packed.dtype == torch.uint8 and packed.shape == (n, half_k // 2)
    assert torch.equal(nq._unpack_int4(packed), codes)


def test_forward_equals_linear_with_the_dequantized_weight():
    g = torch.Generator().manual_seed(2)
    w, x = torch.randn(16, 64, generator=g), torch.randn(3, 5, 64, generator=g)
    layer = nq.QuantLinear(w, "int4-g32")
    want = x.double() @ layer.dequantized_weight(torch.float64).T
    assert torch.allclose(layer(x).double(), want, atol=1e-5)
    assert not layer.kernel_applies(x)  # a CPU tensor: the torch path


def test_quantize_model_swaps_the_projections_only(draft):
    q = nq.quantize_model(draft, "int8-channel")
    layers = nq.quantized_layers(q)
    assert len(layers) == 7 * draft.cfg.n_layers
    assert isinstance(q.embed, torch.nn.Embedding) and q.head.weight is q.embed.weight
    assert isinstance(draft.blocks[0].attn.wq, torch.nn.Linear)  # the original is untouched
    tokens = tinylm.encode("The roofline bound of a kernel")[None]
    with torch.no_grad():
        p_q, p = q(tokens).softmax(-1), draft(tokens).softmax(-1)
    assert 0 < float((p_q - p).abs().max()) < 0.02  # int8 changes the model, a little


def test_model_bytes_follow_the_storage_model(draft):
    base = nq.cast_unquantized(draft, torch.bfloat16)
    assert nq.model_bytes(base) == 2 * draft.num_parameters()  # tied head counted once
    n_quant = sum(l.out_features * l.in_features
                  for l in nq.quantized_layers(nq.quantize_model(draft, "int4-g32")).values())
    q = nq.cast_unquantized(nq.quantize_model(draft, "int4-g32"), torch.bfloat16)
    rest = 2 * (draft.num_parameters() - n_quant)
    assert nq.model_bytes(q) == qz.quantized_weight_bytes(n_quant, 4, group_size=32) + rest
    # llama.cpp's Q4_0 block: 32 weights in 18 bytes (ggml-common.h), 4.5 bits per weight.
    assert qz.bits_per_weight(4, group_size=32) == 18 * 8 / 32


def test_errors():
    with pytest.raises(ValueError, match="unknown scheme"):
        nq.scheme("int3")
    with pytest.raises(ValueError, match="2-D"):
        nq.QuantLinear(torch.ones(4), "int8-channel")
    with pytest.raises(ValueError, match="group size"):
        nq.QuantLinear(torch.ones(4, 48), "int4-g32")
    with pytest.raises(ValueError, match="Decoder"):
        nq.quantize_model(torch.nn.Linear(2, 2), "int8-channel")
    with pytest.raises(ValueError, match="features"):
        nq.QuantLinear(torch.ones(4, 32), "int8-channel")(torch.ones(2, 16))
    with pytest.raises(ValueError, match="per group"):
        nq.QuantLinear(torch.ones(4, 32), "int4-g32").row_scales()
    assert math.isfinite(nq.model_bytes(torch.nn.Linear(2, 2)))


def test_int8_halves_the_matrices_bytes(draft):
    """Published number: LLM.int8() "cut the memory needed for inference by half" against 16-bit
    weights (Dettmers et al. 2022, abstract); here the quantized matrices take half their bf16
    bytes plus one fp16 scale per row."""
    q = nq.quantize_model(draft, "int8-channel")
    layers = nq.quantized_layers(q).values()
    int8 = sum(l.weight_codes.nbytes + l.scales.nbytes for l in layers)
    bf16 = sum(2 * l.out_features * l.in_features for l in layers)
    assert 0.5 < int8 / bf16 < 0.5 + 1 / draft.cfg.d_model + 1e-9


def test_finer_scales_cost_fewer_bits_per_byte(draft):
    """Quality falls with coarser scales: int4 per tensor is worse than int4 in groups of 32,
    which is worse than the float model; bits per byte is the loss in nats over ln 2."""
    _, val = tinylm.split(tinylm.corpus_bytes())
    base = tinylm.bits_per_byte(draft, val, max_windows=2)
    assert base == pytest.approx(tinylm.evaluate_loss(draft, val, max_windows=2) / math.log(2))
    t4 = tinylm.bits_per_byte(nq.quantize_model(draft, nq.Scheme("int4-tensor", 4, "tensor")),
                              val, max_windows=2)
    g4 = tinylm.bits_per_byte(nq.quantize_model(draft, "int4-g32"), val, max_windows=2)
    assert base < g4 < t4
