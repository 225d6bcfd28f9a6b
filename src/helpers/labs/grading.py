"""Self-grading for labs: a correctness check and a performance check, each a printed verdict.

A verdict's text is deterministic for a given outcome (it names what was checked, never a
timing), so a lab notebook's reference output records the verdict of the reference solution
and ``pytest --nbval`` fails a notebook whose solution earns a different one. A failing verdict
also raises (:meth:`Verdict.require`), with a message that says what was wrong.

Correctness (:func:`check_outputs`), the way kernel test suites do it:

* fresh random inputs on every trial (never all zeros, never the same twice), so a kernel that
  hard-codes or caches an answer fails;
* poisoned outputs: an output buffer the candidate writes into is first filled with NaN, so an
  element the kernel forgets to write is caught;
* a higher-precision reference: the expected result is computed in float64 from the same
  inputs, and compared with a tolerance suited to the candidate's dtype.

Performance (:func:`check_performance`), on a GPU only: the measured median against the
model's lower bound, with the run's spread checked first, so a noisy run is reported as
inconclusive rather than graded, and a time below what physics allows (the roofline of the
kernel's bytes and FLOPs, or the copy of its bytes measured in the same run) is failed as a
measurement error rather than praised.

>>> import torch
>>> v = check_outputs(lambda x: x * 2, lambda x: x * 2, lambda g: (torch.randn(64, generator=g),),
...                   name="double")
>>> print(v)
PASS double: matches a float64 reference on 3 fresh random inputs
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Verdict", "check_outputs", "check_performance", "default_tolerance", "FLOOR_SLACK"]


@dataclass
class Verdict:
    """The outcome of one check: PASS, FAIL or INCONCLUSIVE, with its reasons."""

    name: str
    status: str  # "PASS", "FAIL" or "INCONCLUSIVE"
    reasons: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.status not in ("PASS", "FAIL", "INCONCLUSIVE"):
            raise ValueError(f"status must be PASS, FAIL or INCONCLUSIVE, got {self.status!r}")

    @property
    def passed(self) -> bool:
        return self.status == "PASS"

    def __str__(self) -> str:
        return f"{self.status} {self.name}: " + "; ".join(self.reasons)

    def require(self) -> None:
        """Print the verdict; raise ``AssertionError`` with the reasons if it is a FAIL.

        It returns None, so a notebook cell ending in ``verdict.require()`` shows only the
        printed line (no object repr that a grader would have to compare too).
        """
        print(self)
        if self.status == "FAIL":
            raise AssertionError(str(self))


def default_tolerance(dtype) -> tuple[float, float]:
    """``(rtol, atol)`` for comparing a result of ``dtype`` with a float64 reference."""
    import torch

    table = {torch.float64: (1e-10, 1e-12), torch.float32: (1e-4, 1e-5),
             torch.bfloat16: (2e-2, 1e-2), torch.float16: (5e-3, 1e-3)}
    return table.get(dtype, (0.0, 0.0))


def _to64(x):
    import torch

    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.detach().to(device="cpu", dtype=torch.float64)
    if isinstance(x, torch.Tensor):
        return x.detach().cpu()
    return x


def check_outputs(candidate: Callable[..., Any], reference: Callable[..., Any],
                  make_inputs: Callable[[Any], tuple], *, name: str, trials: int = 3,
                  make_output: Callable[..., Any] | None = None, rtol: float | None = None,
                  atol: float | None = None, device: str = "cpu") -> Verdict:
    """Check ``candidate`` against ``reference`` on fresh random inputs.

    Parameters
    ----------
    candidate, reference : callable
        ``candidate(*inputs)`` returns the result, or, when ``make_output`` is given, writes it
        into the last argument ``candidate(*inputs, out)``. ``reference(*inputs)`` is called with
        the inputs converted to float64 on the CPU.
    make_inputs : callable
        ``make_inputs(generator)`` returns the input tuple, drawn from the ``torch.Generator``
        it is given (seeded afresh on every trial).
    make_output : callable, optional
        ``make_output(*inputs)`` allocates the output buffer; it is filled with NaN before the
        candidate runs.
    trials : int
        Number of fresh inputs tried.
    rtol, atol : float, optional
        Tolerances; default from :func:`default_tolerance` of the candidate's result dtype.
    device : str
        Where the generator draws (the inputs are created where ``make_inputs`` puts them).
    """
    import torch

    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    for trial in range(trials):
        gen = torch.Generator(device="cpu").manual_seed(secrets.randbits(62))
        inputs = make_inputs(gen)
        if not all(not isinstance(x, torch.Tensor) or not x.is_floating_point() or bool(x.abs().sum() > 0)
                   for x in inputs):
            raise ValueError("make_inputs returned an all-zero input; draw random values")
        try:
            if make_output is not None:
                out = make_output(*inputs)
                out.fill_(float("nan"))
                candidate(*inputs, out)
                got = out
            else:
                got = candidate(*inputs)
            if device.startswith("cuda"):
                torch.cuda.synchronize()
        except Exception as exc:  # the candidate crashed: report it as the failure
            return Verdict(name, "FAIL", [f"raised {type(exc).__name__}: {exc}"])
        expected = reference(*[_to64(x) for x in inputs])
        if not isinstance(got, torch.Tensor):
            return Verdict(name, "FAIL", [f"returned {type(got).__name__}, expected a tensor"])
        if tuple(got.shape) != tuple(expected.shape):
            return Verdict(name, "FAIL", [f"shape {tuple(got.shape)}, expected {tuple(expected.shape)}"])
        got64 = _to64(got)
        n_nan = int(torch.isnan(got64).sum()) if got64.is_floating_point() else 0
        if n_nan:
            what = "left unwritten (still NaN)" if make_output is not None else "NaN"
            return Verdict(name, "FAIL", [f"{n_nan} of {got64.numel()} output elements {what}"])
        r, a = default_tolerance(got.dtype)
        r = r if rtol is None else rtol
        a = a if atol is None else atol
        if not torch.allclose(got64, expected.to(got64.dtype), rtol=r, atol=a):
            err = (got64 - expected).abs()
            worst = int(err.argmax())
            return Verdict(name, "FAIL", [
                f"wrong values on trial {trial + 1}: {int((err > a + r * expected.abs()).sum())} of "
                f"{got64.numel()} elements outside rtol={r:g}, atol={a:g} (worst at flat index "
                f"{worst}: got {float(got64.flatten()[worst]):.6g}, "
                f"expected {float(expected.flatten()[worst]):.6g})"])
    return Verdict(name, "PASS", [f"matches a float64 reference on {trials} fresh random inputs"])


#: How far below a physical floor a measured time may fall before it is called impossible:
#: clocks boost past their base and datasheet rates are rounded, by a few percent.
FLOOR_SLACK = 0.05


def check_performance(measured_s: float, bound_s: float, *, name: str, spread: float,
                      min_fraction: float = 0.5, max_spread: float = 0.1,
                      reference_s: float | None = None, floor_s: float | None = None,
                      floor_what: str = "the roofline bound of its bytes and FLOPs") -> Verdict:
    """Grade a measured median time against the model's lower bound.

    ``fraction = bound_s / measured_s`` is the share of the model's best case the kernel
    reaches (1 is perfect). A run whose relative spread exceeds ``max_spread`` is
    INCONCLUSIVE; otherwise PASS when ``fraction >= min_fraction``. The text of a PASS or
    FAIL names the threshold but not the machine's numbers, which the lab prints apart.

    ``floor_s``, when given, is the least time physics allows the kernel (``floor_what`` says
    which: the roofline of its bytes and FLOPs on the GPU, or the copy of its bytes measured in
    the same run). A median more than :data:`FLOOR_SLACK` below it is a measurement error (an
    unsynchronized timer, a cached or skipped computation): a FAIL that says so, before any
    other check.

    >>> print(check_performance(1e-3, 0.9e-3, name="k", spread=0.01, floor_s=2e-3))
    FAIL k: faster than the roofline bound of its bytes and FLOPs allows: a measurement error (an unsynchronized timer, or a result cached or skipped), not a fast kernel
    """
    for label, v in (("measured_s", measured_s), ("bound_s", bound_s)):
        if not v > 0:
            raise ValueError(f"{label} must be > 0, got {v!r}")
    if floor_s is not None and not floor_s > 0:
        raise ValueError(f"floor_s must be > 0 or None, got {floor_s!r}")
    if floor_s is not None and measured_s < floor_s * (1 - FLOOR_SLACK):
        return Verdict(name, "FAIL", [
            f"faster than {floor_what} allows: a measurement error (an unsynchronized "
            "timer, or a result cached or skipped), not a fast kernel"])
    if not 0 < min_fraction <= 1:
        raise ValueError(f"min_fraction must be in (0, 1], got {min_fraction!r}")
    if not spread >= 0:
        raise ValueError(f"spread must be >= 0, got {spread!r}")
    if spread > max_spread:
        return Verdict(name, "INCONCLUSIVE",
                       [f"the run's spread {spread:.0%} exceeds {max_spread:.0%}; rerun on a quiet GPU"])
    fraction = bound_s / measured_s
    ref = ""
    if reference_s is not None and reference_s > 0:
        ref = f" (the H200 reference reaches {bound_s / reference_s:.0%} of its own bound)"
    status = "PASS" if fraction >= min_fraction else "FAIL"
    word = "reaches" if status == "PASS" else "falls short of"
    return Verdict(name, status, [f"{word} {min_fraction:.0%} of the model's bound{ref}"])
