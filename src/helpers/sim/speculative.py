r"""The accept/reject cycle of speculative decoding, sampled: the oracle of its models.

* :func:`speculative_sample` is one position of speculative sampling on explicit
  distributions: draw :math:`x \sim q`, keep it with probability :math:`\min(1, p(x)/q(x))`,
  otherwise draw from :math:`\operatorname{norm}(\max(0, p - q))`. Its output is distributed
  exactly as :math:`p` (Leviathan et al., 2023, appendix A.1), which a test checks by sampling.
* :func:`simulate_cycles` draws whole cycles with independent acceptances of probability
  :math:`\alpha` and returns the tokens each produced, the Monte Carlo oracle of
  :func:`helpers.models.speculative.expected_tokens_per_cycle`.
* :func:`tokens_per_cycle_pmf` enumerates the same distribution exactly (a capped geometric).

>>> import numpy as np
>>> n = simulate_cycles(0.8, 5, 200_000, seed=0)
>>> round(float(n.mean()), 2)
3.69

Used by: chapters/quantization-and-speculation.md.
"""

from __future__ import annotations

import numpy as np

from ..models._checks import fraction, positive_int
from ..models.speculative import _distribution, residual_distribution

__all__ = ["speculative_sample", "simulate_cycles", "tokens_per_cycle_pmf"]


def speculative_sample(p, q, rng: np.random.Generator) -> tuple[int, bool]:
    """One token by speculative sampling: ``(token, accepted)`` where ``accepted`` says whether
    the draft's proposal was kept (else the token came from the residual distribution)."""
    pa, qa = _distribution("p", p), _distribution("q", q)
    if pa.shape != qa.shape:
        raise ValueError(f"p and q must have the same shape, got {pa.shape} and {qa.shape}")
    x = int(rng.choice(qa.size, p=qa))
    if rng.random() * qa[x] <= pa[x]:  # r < p/q without dividing (q[x] > 0: x was drawn)
        return x, True
    return int(rng.choice(pa.size, p=residual_distribution(pa, qa))), False


def simulate_cycles(acceptance: float, draft_len: int, n_cycles: int, *, seed: int = 0):
    """Tokens produced by each of ``n_cycles`` cycles: accepted drafts (stopping at the first
    rejection) plus the target's one token. Returns an int array of values in 1..draft_len+1."""
    a = fraction("acceptance", acceptance)
    g = positive_int("draft_len", draft_len, minimum=0)
    n = positive_int("n_cycles", n_cycles)
    rng = np.random.default_rng(seed)
    ok = rng.random((n, g)) < a
    # accepted prefix length = index of the first False (g when all pass)
    first_reject = np.where(ok.all(axis=1), g, np.argmin(ok, axis=1)) if g else np.zeros(n, int)
    return first_reject.astype(int) + 1


def tokens_per_cycle_pmf(acceptance: float, draft_len: int) -> np.ndarray:
    """Exact distribution of the tokens per cycle: ``pmf[k-1] = P(N = k)`` for k = 1..g+1,
    ``P(N = k) = a**(k-1) (1 - a)`` below the cap and ``a**g`` at it."""
    a = fraction("acceptance", acceptance)
    g = positive_int("draft_len", draft_len, minimum=0)
    k = np.arange(g + 1)
    pmf = a ** k * (1 - a)
    pmf[-1] = a ** g
    return pmf
