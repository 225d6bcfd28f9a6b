"""The grader of the attention lab's exercise (``labs/attention.md``, "Grade"): a reader's fused
attention kernel checked against float64 without and with the causal mask
(:func:`grade_attention`), and its speed against SDPA on a GPU (:func:`grade_attention_speed`).
Sizes, tolerances and inputs are those of :mod:`helpers.labs.attention`.
"""

from __future__ import annotations

from helpers.labs.core import lab_device
from helpers.labs.grading import Verdict, check_outputs, check_performance
from helpers.models import attention as model

__all__ = ["grade_attention", "grade_attention_speed"]


def _grading_shape(device: str) -> tuple[tuple[int, int, int], dict, str]:
    """(shape, launch settings, dtype name): tiny fp32 blocks on a CPU, bf16 defaults on a GPU."""
    if device.startswith("cuda"):
        return (4, 1000, 64), {}, "bfloat16"
    return (2, 75, 16), {"block_m": 32, "block_n": 16}, "float32"


def grade_attention(kernel, device: str | None = None, trials: int = 2) -> Verdict:
    """Correctness of a reader's fused attention kernel (same signature as
    :func:`helpers.kernels.attention.attention_fwd_kernel`), without and with the causal
    mask, on fresh random inputs whose length is not a multiple of a block; the output is
    poisoned with NaN first and compared with float64."""
    import torch

    from helpers.kernels import attention as kern
    from helpers.labs.attention import TOLERANCE, _inputs

    device = device or lab_device()
    shape, launch, dtype_name = _grading_shape(device)
    dtype = getattr(torch, dtype_name)

    def make(gen):
        return _inputs(shape, gen, device, dtype)

    atol = TOLERANCE[dtype_name]
    for causal in (False, True):
        v = check_outputs(
            lambda q, k, v, o: kern.attention(q, k, v, causal=causal, out=o, kernel=kernel,
                                              **launch),
            lambda q, k, v: kern.attention_reference(q, k, v, causal=causal), make,
            name="fused attention kernel", trials=trials, make_output=lambda q, k, v: torch.empty_like(q),
            rtol=0.0, atol=atol, device=device)
        if not v.passed:
            v.reasons.insert(0, "causal" if causal else "no mask")
            return v
    return Verdict("fused attention kernel", "PASS",
                   [f"matches a float64 reference without and with the causal mask on "
                    f"{trials} fresh random inputs each"])


def grade_attention_speed(kernel, device: str | None = None, seq_len: int = 4096,
                          min_fraction: float = 0.5) -> Verdict | None:
    """Speed of a reader's kernel against SDPA on a GPU (None on a CPU): PASS when it reaches
    ``min_fraction`` of SDPA's speed at ``seq_len``, d = 64, no mask; INCONCLUSIVE if noisy.

    The default asks half of SDPA's speed of the page's exercise, a plain loop with a mask on
    every block; the book's own kernel aims at 80 % (:func:`fused_vs_sdpa` reports it)."""
    import torch

    from helpers.kernels import attention as kern
    from helpers.kernels.attention_torch import sdpa_attention
    from helpers.labs.attention import FULL_HIDDEN, FULL_TOKENS, LAB, _checked, _inputs

    device = device or lab_device()
    if not device.startswith("cuda"):
        return None
    gen = torch.Generator().manual_seed(11)
    heads = FULL_HIDDEN // 64
    q, k, v = _inputs((max(1, FULL_TOKENS // seq_len), heads, seq_len, 64), gen, device,
                      torch.bfloat16)
    mine_fn = (lambda: kern.attention(q, k, v, kernel=kernel))
    _checked("your kernel", mine_fn, q, k, v, False, gen, "bfloat16")
    mine = LAB.bench(mine_fn, device, "your_attention")
    sdpa = LAB.bench(lambda: sdpa_attention(q, k, v), device, "sdpa")
    flop = model.attention_flop(seq_len, 64, n_heads=heads, batch=q.shape[0])
    print(f"your kernel: {flop / mine.median_s / 1e12:.3g} TFLOP/s, SDPA "
          f"{flop / sdpa.median_s / 1e12:.3g} TFLOP/s")
    return check_performance(mine.median_s, sdpa.median_s, name="fused attention speed vs SDPA",
                             spread=max(mine.spread, sdpa.spread), min_fraction=min_fraction)
