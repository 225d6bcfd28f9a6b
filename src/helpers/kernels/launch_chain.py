"""The launch-overhead lab's chain of tiny kernels: ``x.neg_()`` in place, ``n`` times.

After ``n`` negations a tensor is exactly ``(-1)**n`` times what it was, so
:func:`check_chain` checks a chain without a tolerance. :func:`chain` launches the kernels one
by one (eagerly), :func:`capture_chain` records them in a ``torch.cuda.CUDAGraph``. The size
sweep rotates each chain through several tensors (:func:`sweep_buffers`), so that a kernel's
tensor has left the L2 cache by the time its turn comes round again and every kernel of a
large size streams from HBM, as the lab's model assumes.

Library only: no page imports it.
"""

from __future__ import annotations

import math

__all__ = ["make_input", "chain", "check_chain", "capture_chain", "sweep_buffers", "l2_bytes"]


def make_input(numel: int, device: str, seed: int = 0):
    """A float32 tensor of ``numel`` values in [0.5, 1.5) (never zero) on ``device``."""
    import torch

    if not (isinstance(numel, int) and numel >= 1):
        raise ValueError(f"numel must be an integer >= 1, got {numel!r}")
    gen = torch.Generator().manual_seed(int(seed))
    return (torch.rand(numel, generator=gen, dtype=torch.float32) + 0.5).to(device)


def chain(x, n_kernels: int):
    """Enqueue ``n_kernels`` dependent tiny kernels: negate ``x`` in place, ``n_kernels`` times.

    ``x`` may be a list of ``k`` tensors: kernel ``i`` then negates ``x[i % k]`` (the size
    sweep's rotation, so that a kernel's tensor has left the L2 by the time it comes round).
    """
    if isinstance(x, (list, tuple)):
        k = len(x)
        for i in range(n_kernels):
            x[i % k].neg_()
        return x
    for _ in range(n_kernels):
        x.neg_()
    return x


def check_chain(x, before, n_kernels: int) -> None:
    """Raise unless ``x`` is exactly ``(-1)**n_kernels * before`` (negation is exact); for
    lists, each tensor ``j`` against its own count of negations (kernels ``i`` with
    ``i % k == j``)."""
    import torch

    if isinstance(x, (list, tuple)):
        k = len(x)
        for j, (xj, bj) in enumerate(zip(x, before)):
            count = len(range(j, n_kernels, k))
            if not torch.equal(xj, bj if count % 2 == 0 else -bj):
                raise AssertionError(f"chain of {n_kernels} negations over {k} tensors gave "
                                     f"a wrong result in tensor {j}")
        return
    expected = before if n_kernels % 2 == 0 else -before
    if not torch.equal(x, expected):
        raise AssertionError(f"chain of {n_kernels} negations gave a wrong result")


def sweep_buffers(numel: int, n_kernels: int, l2_bytes: float) -> int:
    """Tensors the size sweep rotates through: enough float32 tensors of ``numel`` that together
    they hold twice ``l2_bytes`` (each kernel's tensor was evicted since its last turn), at most
    one per kernel, at least one; 1 where ``l2_bytes`` is 0 (a CPU run)."""
    if l2_bytes <= 0:
        return 1
    return max(1, min(int(n_kernels), math.ceil(2.0 * l2_bytes / (4.0 * numel))))


def l2_bytes(device: str) -> float:
    """The GPU's L2 capacity (bytes) from torch's device properties; 0 on a CPU."""
    if not device.startswith("cuda"):
        return 0.0
    import torch

    return float(torch.cuda.get_device_properties(torch.device(device)).L2_cache_size)


def capture_chain(x, n_kernels: int):
    """Capture ``chain(x, n_kernels)`` in a ``torch.cuda.CUDAGraph`` and return the graph.

    Two warm-up runs on a side stream first, as PyTorch's CUDA-graph documentation prescribes
    (:func:`helpers.bench.device.capture_graph`); capture records the kernels without running
    them.
    """
    from helpers.bench.device import capture_graph

    graph, _ = capture_graph(lambda: chain(x, n_kernels), device=str(x.device), warmup_calls=2)
    return graph
