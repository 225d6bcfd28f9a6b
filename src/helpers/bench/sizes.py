"""The one size switch: small problems in CI and on a CPU, full problems on a GPU.

Every lab and measurement in the book chooses its problem sizes through :func:`pick`, which
reads one environment variable, ``BOOK_SIZE``:

* ``BOOK_SIZE=small``: small sizes (CI, the test suite and the reference notebooks set this);
* ``BOOK_SIZE=full``: full sizes;
* unset: full sizes where a CUDA GPU is usable, small sizes otherwise.

``BOOK_FORCE_CPU=1`` hides a GPU, so the CPU tier of a lab can be exercised on a GPU machine.
A runner's ``--size`` is handed over directly, without the environment: :func:`use_tier` sets
the tier for a block (and :func:`helpers.distributed.spawn` carries it into its ranks). The
names of both variables are :data:`SIZE_ENV` and :data:`FORCE_CPU_ENV`; nothing else spells
them.

>>> import os
>>> saved = os.environ.get(SIZE_ENV)
>>> os.environ[SIZE_ENV] = "small"
>>> pick(small=1 << 20, full=1 << 28)
1048576
>>> os.environ[SIZE_ENV] = "full"
>>> pick(small=1 << 20, full=1 << 28)
268435456
>>> _ = os.environ.pop(SIZE_ENV) if saved is None else os.environ.update({SIZE_ENV: saved})

Used by many pages, among them: chapters/cuda-execution.md, chapters/custom-operators.md,
chapters/fusion-and-attention.md, chapters/gemm.md, chapters/gpu-architecture.md,
chapters/measurement.md.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator, TypeVar

__all__ = ["size_tier", "pick", "has_cuda", "use_tier", "forced_tier", "SIZE_ENV",
           "FORCE_CPU_ENV"]

SIZE_ENV = "BOOK_SIZE"
FORCE_CPU_ENV = "BOOK_FORCE_CPU"
_TIERS = ("small", "full")

T = TypeVar("T")

_forced: str | None = None   # set by use_tier, ahead of the environment


def has_cuda() -> bool:
    """True if torch is importable, sees a CUDA device, and ``BOOK_FORCE_CPU`` is not set."""
    if os.environ.get(FORCE_CPU_ENV) == "1":
        return False
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def size_tier() -> str:
    """The size tier in force: ``"small"`` or ``"full"`` (:func:`use_tier`, else ``BOOK_SIZE``,
    else the hardware)."""
    if _forced is not None:
        return _forced
    value = os.environ.get(SIZE_ENV, "").strip().lower()
    if value in _TIERS:
        return value
    if value:
        raise ValueError(f"{SIZE_ENV} must be one of {_TIERS} or unset, got {value!r}")
    return "full" if has_cuda() else "small"


def pick(*, small: T, full: T) -> T:
    """Return ``small`` or ``full`` according to :func:`size_tier`.

    Both are keyword-only, so a call site always says which size is which.
    """
    return small if size_tier() == "small" else full


def forced_tier() -> str | None:
    """The tier :func:`use_tier` set, or None when the environment and the hardware decide."""
    return _forced


@contextmanager
def use_tier(tier: str | None) -> Iterator[None]:
    """Run a block at ``tier`` (``"small"`` or ``"full"``) whatever ``BOOK_SIZE`` says; None
    changes nothing. The environment is left as it was.

    >>> with use_tier("full"):
    ...     pick(small=1, full=2)
    2
    >>> with use_tier(None):
    ...     size_tier() == size_tier()
    True
    """
    global _forced
    if tier is not None and tier not in _TIERS:
        raise ValueError(f"tier must be one of {_TIERS} or None, got {tier!r}")
    saved = _forced
    if tier is not None:
        _forced = tier
    try:
        yield
    finally:
        _forced = saved
