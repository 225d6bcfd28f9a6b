r"""Speculative decoding: tokens per cycle, speedup and cost from the acceptance rate.

A small *draft* model proposes :math:`\gamma` tokens one after another; the *target* model
scores all of them in one forward pass and keeps the longest prefix it agrees with, plus one
token of its own (the correction at the first disagreement, or a bonus token when all
:math:`\gamma` pass). If each draft token is accepted independently with probability
:math:`\alpha` (the *acceptance rate*), the tokens one cycle yields are a capped geometric
variable with mean

.. math:: \mathbb{E}[\text{tokens per cycle}] = \frac{1 - \alpha^{\gamma + 1}}{1 - \alpha}
   \qquad\text{(eq-qs-tokens)}

and, with :math:`c` the cost of one draft step over one target step, the expected walltime
improvement over plain decoding is

.. math:: S = \frac{1 - \alpha^{\gamma + 1}}{(1 - \alpha)(\gamma c + 1)}
   \qquad\text{(eq-qs-speedup)}

The acceptance rule that keeps the target's distribution exactly (accept the draft's token
:math:`x \sim q` with probability :math:`\min(1, p(x)/q(x))`, else sample from the
normalized residual :math:`\max(0, p - q)`) accepts with probability
:math:`\sum_x \min(p(x), q(x))`: :func:`acceptance_rate`. Greedy decoding is the special case
in which :math:`p` and :math:`q` are one-hot at each model's argmax. The sampler itself (and a
Monte Carlo of the cycle, this module's oracle) is in :mod:`helpers.sim.speculative`.

Introduced in {ref}`sec-quantization-and-speculation`; measured in {ref}`sec-lab-speculative`.

References
----------
* Leviathan, Y., Kalman, M. & Matias, Y. (2023), "Fast Inference from Transformers via
  Speculative Decoding", ICML: equation 1 (tokens per cycle), definition 3.7 (cost
  coefficient c), theorem 3.8 (walltime improvement), corollary 3.9, theorem 3.11
  (arithmetic operations), table 1 (speed and operations at c = 0), section 3.6 (bigram
  draft: alpha about 0.2, 1.25X at gamma = 3), theorem 3.5 (beta = sum min(p, q)).
* Chen, C. et al. (2023), "Accelerating Large Language Model Decoding with Speculative
  Sampling", arXiv:2302.01318 (the same rejection scheme, found independently).

Used by: chapters/quantization-and-speculation.md, labs/speculative.md.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import fraction as _fraction
from ._checks import positive as _positive
from ._checks import positive_int as _positive_int
from . import _checks

__all__ = ["expected_tokens_per_cycle", "cycle_cost", "speedup", "cost_per_token",
           "operations_factor", "optimal_draft_length", "acceptance_rate",
           "residual_distribution", "acceptance_from_tokens_per_cycle",
           "tokens_per_cycle_std", "launch_bound_cost_ratio"]


def expected_tokens_per_cycle(acceptance: float, draft_len: int) -> float:
    r"""Expected tokens one draft-and-verify cycle produces (dimensionless).

    .. math:: \mathbb{E}[N] = \frac{1 - \alpha^{\gamma + 1}}{1 - \alpha}
              = \sum_{i=0}^{\gamma} \alpha^i     (the page labels this eq-qs-tokens)

    Parameters
    ----------
    acceptance : float
        :math:`\alpha`, probability that a draft token is accepted, in [0, 1].
    draft_len : int
        :math:`\gamma`, draft tokens proposed per cycle (>= 0; 0 is plain decoding).

    Returns
    -------
    float
        Between 1 (nothing accepted) and :math:`\gamma + 1` (all accepted plus the bonus).

    Assumptions
    -----------
    Acceptances are independent with the same :math:`\alpha` (the paper's i.i.d.
    simplification); the cycle stops at the first rejection.

    References
    ----------
    Leviathan et al. (2023), equation 1.

    Examples
    --------
    >>> expected_tokens_per_cycle(0.8, 5), expected_tokens_per_cycle(1.0, 4)
    (3.68928, 5.0)
    """
    a = _fraction("acceptance", acceptance)
    g = _positive_int("draft_len", draft_len, minimum=0)
    if a == 1.0:
        return float(g + 1)
    return (1 - a ** (g + 1)) / (1 - a)


def cycle_cost(draft_len: int, cost_ratio: float, verify_cost_ratio: float = 1.0) -> float:
    r"""Time of one cycle in units of one target decoding step (dimensionless).

    .. math:: T_{\text{cycle}} / T_{\text{target}} = \gamma c + v

    Parameters
    ----------
    draft_len : int
        :math:`\gamma` (>= 0).
    cost_ratio : float
        :math:`c`, time of one draft step over one target step (>= 0).
    verify_cost_ratio : float
        :math:`v`, time of the target's pass over :math:`\gamma + 1` tokens over one target
        step (> 0); the paper assumes 1 (verification as fast as one step, true while a step
        is bound by reading the weights).

    Returns
    -------
    float
        :math:`\gamma c + v`.

    References
    ----------
    Leviathan et al. (2023), proof of theorem 3.8 (a cycle costs :math:`Tc\gamma + T`).

    Examples
    --------
    >>> cycle_cost(4, 0.05)
    1.2
    """
    g = _positive_int("draft_len", draft_len, minimum=0)
    c = _positive("cost_ratio", cost_ratio, allow_zero=True)
    v = _positive("verify_cost_ratio", verify_cost_ratio)
    return g * c + v


def speedup(acceptance: float, draft_len: int, cost_ratio: float,
            verify_cost_ratio: float = 1.0) -> float:
    r"""Expected walltime improvement of speculative over plain decoding (dimensionless).

    .. math:: S = \frac{1 - \alpha^{\gamma + 1}}{(1 - \alpha)(\gamma c + v)}
              \qquad (v = 1 \text{ in the paper; the page labels this eq-qs-speedup})

    Parameters
    ----------
    acceptance : float
        :math:`\alpha` in [0, 1].
    draft_len : int
        :math:`\gamma` (>= 0).
    cost_ratio : float
        :math:`c`, draft step time over target step time (>= 0).
    verify_cost_ratio : float
        :math:`v`, as in :func:`cycle_cost` (default 1).

    Returns
    -------
    float
        :math:`S` (> 1 is a gain).

    Assumptions
    -----------
    As :func:`expected_tokens_per_cycle`; long generations (the prefill and the last partial
    cycle are ignored).

    References
    ----------
    Leviathan et al. (2023), theorem 3.8 and table 1.

    Examples
    --------
    Table 1 of the paper (c = 0): alpha = 0.8, gamma = 5 gives 3.69X.

    >>> round(speedup(0.8, 5, 0.0), 2)
    3.69
    """
    return expected_tokens_per_cycle(acceptance, draft_len) / cycle_cost(
        draft_len, cost_ratio, verify_cost_ratio)


def cost_per_token(acceptance: float, draft_len: int, cost_ratio: float,
                   verify_cost_ratio: float = 1.0) -> float:
    r"""Expected time per generated token, in units of one target step (dimensionless).

    .. math:: \frac{T}{T_{\text{target}}} = \frac{(\gamma c + v)(1 - \alpha)}{1 - \alpha^{\gamma+1}}

    The reciprocal of :func:`speedup`.

    References
    ----------
    Leviathan et al. (2023), proof of theorem 3.8.

    Examples
    --------
    >>> round(cost_per_token(0.8, 5, 0.0), 4)
    0.2711
    """
    if speedup(acceptance, draft_len, cost_ratio, verify_cost_ratio) <= 0:
        raise ValueError(f"cost_ratio is too large for a nonzero speedup, got {cost_ratio!r}")
    return 1.0 / speedup(acceptance, draft_len, cost_ratio, verify_cost_ratio)


def operations_factor(acceptance: float, draft_len: int, op_ratio: float = 0.0) -> float:
    r"""Factor by which speculative decoding multiplies the total arithmetic (dimensionless).

    .. math:: \frac{(1 - \alpha)(\gamma \hat c + \gamma + 1)}{1 - \alpha^{\gamma + 1}}

    The target scores :math:`\gamma + 1` positions per cycle whether or not they are kept;
    rejected ones are wasted work.

    Parameters
    ----------
    acceptance : float
        :math:`\alpha` in [0, 1].
    draft_len : int
        :math:`\gamma` (>= 0).
    op_ratio : float
        :math:`\hat c`, the draft's arithmetic per token over the target's (>= 0).

    References
    ----------
    Leviathan et al. (2023), theorem 3.11 and table 1 ("Operations" column).

    Examples
    --------
    >>> round(operations_factor(0.8, 5), 2)
    1.63
    """
    g = _positive_int("draft_len", draft_len, minimum=0)
    ch = _positive("op_ratio", op_ratio, allow_zero=True)
    return (g * ch + g + 1) / expected_tokens_per_cycle(acceptance, g)


def optimal_draft_length(acceptance: float, cost_ratio: float, verify_cost_ratio: float = 1.0,
                         *, max_len: int = 64) -> int:
    r"""The draft length :math:`\gamma \in [0, \text{max\_len}]` that maximizes :func:`speedup`.

    .. math:: \gamma^{*} = \arg\max_{\gamma} \frac{1 - \alpha^{\gamma+1}}{(1-\alpha)(\gamma c + v)}

    Returns 0 (do not speculate) when no draft length beats plain decoding; with :math:`v = 1`
    that happens exactly when :math:`\alpha \le c` (corollary 3.9).

    Parameters
    ----------
    acceptance, cost_ratio, verify_cost_ratio
        As in :func:`speedup`.
    max_len : int
        Largest draft length tried (>= 1); with :math:`c = 0` and :math:`\alpha = 1` every
        longer draft is better, so the answer is ``max_len``.

    Returns
    -------
    int
        :math:`\gamma^*` (the smallest one on a tie).

    References
    ----------
    Leviathan et al. (2023), section 3.5 and figure 3 (found numerically).

    Examples
    --------
    >>> optimal_draft_length(0.8, 0.05), optimal_draft_length(0.3, 0.4)
    (8, 0)
    """
    _checks.positive_int("max_len", max_len, maximum=10**5)
    m = _positive_int("max_len", max_len)
    _positive("verify_cost_ratio", verify_cost_ratio)
    best, best_g = 1.0, 0  # plain decoding
    for g in range(1, m + 1):
        s = speedup(acceptance, g, cost_ratio, verify_cost_ratio)
        if s > best * (1 + 1e-12):
            best, best_g = s, g
    return best_g


def acceptance_rate(p, q) -> float:
    r"""Probability that speculative sampling accepts a draft token, for one position.

    .. math:: \beta = \sum_x \min\bigl(p(x), q(x)\bigr) = 1 - D_{LK}(p, q)

    Parameters
    ----------
    p, q : array_like
        Target and draft distributions over the same vocabulary (non-negative, each summing
        to 1 within 1e-6).

    Returns
    -------
    float
        :math:`\beta` in [0, 1]; :math:`\alpha` is its mean over positions.

    References
    ----------
    Leviathan et al. (2023), theorem 3.5 and corollary 3.6.

    Examples
    --------
    >>> acceptance_rate([0.5, 0.5, 0.0], [0.25, 0.25, 0.5])
    0.5
    """
    pa, qa = _distribution("p", p), _distribution("q", q)
    if pa.shape != qa.shape:
        raise ValueError(f"p and q must have the same shape, got {pa.shape} and {qa.shape}")
    return float(np.minimum(pa, qa).sum())


def residual_distribution(p, q):
    r"""Where to sample after a rejection: :math:`p' = \operatorname{norm}(\max(0, p - q))`.

    .. math:: p'(x) = \frac{\max(0, p(x) - q(x))}{\sum_y \max(0, p(y) - q(y))}

    Parameters
    ----------
    p, q : array_like
        Target and draft distributions (as in :func:`acceptance_rate`).

    Returns
    -------
    numpy.ndarray
        :math:`p'`; equal to ``p`` when ``p == q`` (a rejection then never happens).

    References
    ----------
    Leviathan et al. (2023), section 2.3 and appendix A.1 (the output is distributed as p).

    Examples
    --------
    >>> residual_distribution([0.5, 0.5, 0.0], [0.25, 0.25, 0.5]).tolist()
    [0.5, 0.5, 0.0]
    """
    pa, qa = _distribution("p", p), _distribution("q", q)
    if pa.shape != qa.shape:
        raise ValueError(f"p and q must have the same shape, got {pa.shape} and {qa.shape}")
    r = np.maximum(pa - qa, 0.0)
    total = r.sum()
    return pa.copy() if total <= 1e-15 else r / total


def acceptance_from_tokens_per_cycle(tokens_per_cycle: float, draft_len: int) -> float:
    r"""The acceptance rate :math:`\alpha` that equation (eq-qs-tokens) maps to a measured mean.

    .. math:: \text{solve } \frac{1 - \alpha^{\gamma+1}}{1 - \alpha} = \bar N \text{ for } \alpha \in [0, 1]

    Parameters
    ----------
    tokens_per_cycle : float
        :math:`\bar N`, measured mean tokens per cycle, in :math:`[1, \gamma + 1]`.
    draft_len : int
        :math:`\gamma` (>= 1).

    Returns
    -------
    float
        :math:`\alpha` (bisection to 1e-12; the left side increases with :math:`\alpha`).

    References
    ----------
    Leviathan et al. (2023), equation 1 (inverted); section 4.2 measures alpha this way.

    Examples
    --------
    >>> round(acceptance_from_tokens_per_cycle(3.68928, 5), 6)
    0.8
    """
    g = _positive_int("draft_len", draft_len)
    n = _positive("tokens_per_cycle", tokens_per_cycle)
    if not 1.0 <= n <= g + 1:
        raise ValueError(f"tokens_per_cycle must lie in [1, {g + 1}] for draft_len {g}, got {n}")
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if expected_tokens_per_cycle(mid, g) < n:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    return (lo + hi) / 2


def _distribution(name: str, x):
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D distribution, got shape {a.shape}")
    if not np.all(np.isfinite(a)) or np.any(a < 0) or not math.isclose(a.sum(), 1.0,
                                                                          abs_tol=1e-6):
        raise ValueError(f"{name} must be non-negative and sum to 1, got sum {a.sum()!r}")
    return a


# --- labs3: the spread of a cycle's tokens, and c when launches set the cost (the lab's claims)

def tokens_per_cycle_std(acceptance: float, draft_len: int) -> float:
    r"""Standard deviation of the tokens one cycle yields (dimensionless), under the
    independence of :func:`expected_tokens_per_cycle`.

    With :math:`M = \min(K, \gamma)` the drafts accepted (:math:`P(M \ge k) = \alpha^k` for
    :math:`k \le \gamma`) and :math:`N = M + 1`:

    .. math:: \operatorname{Var} N = \sum_{k=1}^{\gamma} (2k - 1)\,\alpha^k
              - \Bigl(\sum_{k=1}^{\gamma} \alpha^k\Bigr)^2

    Over :math:`n` cycles the mean's standard error is this over :math:`\sqrt n`: what a
    finite text allows a measured tokens-per-cycle to differ from the formula.

    Parameters
    ----------
    acceptance : float
        :math:`\alpha` in [0, 1].
    draft_len : int
        :math:`\gamma` (>= 0).

    References
    ----------
    Leviathan et al. (2023), equation 1 and its capped geometric variable (the mean); the
    variance follows from :math:`E[M^2] = \sum_k (2k - 1) P(M \ge k)`.

    Examples
    --------
    The H200 run's acceptance 0.792 at :math:`\gamma = 8`: a spread of about 2.8 tokens
    around a mean of 4.2, so 121 cycles pin the mean to about 6 %:

    >>> round(tokens_per_cycle_std(0.792, 8), 2)
    2.82
    """
    a = _fraction("acceptance", acceptance)
    if isinstance(draft_len, bool) or not isinstance(draft_len, int) or draft_len < 0:
        raise ValueError(f"draft_len must be an integer >= 0, got {draft_len!r}")
    g = draft_len
    if a in (0.0, 1.0) or g == 0:
        return 0.0  # the cycle always yields 1, or always g + 1
    if g <= 4096:
        mean = sum(a ** k for k in range(1, g + 1))
        second = sum((2 * k - 1) * a ** k for k in range(1, g + 1))
    else:  # the sums in closed form (a ** g underflows harmlessly for a long draft)
        ag = a ** g
        mean = a * (1 - ag) / (1 - a)
        weighted = a * (1 - (g + 1) * ag + g * ag * a) / (1 - a) ** 2  # sum of k a^k
        second = 2 * weighted - mean
    return math.sqrt(max(0.0, second - mean * mean))


def launch_bound_cost_ratio(draft_ops: int, target_ops: int) -> float:
    r"""The cost ratio :math:`c` (dimensionless) when every operator a step dispatches costs the
    same host and launch time: the draft's operators per step over the target's.

    .. math:: c \approx \frac{n_\text{draft}}{n_\text{target}}

    Parameters
    ----------
    draft_ops, target_ops : int
        Operators (ATen calls) one decode step of each model dispatches (>= 1).

    Assumptions
    -----------
    Launch-bound steps (each kernel shorter than its launch), so a step's time is its count of
    launches times one launch; costs outside the dispatched operators (the step's Python, the
    argmax's synchronization) are the same for both models and pull the measured :math:`c`
    toward 1.

    References
    ----------
    Leviathan et al. (2023), definition 3.7 (c is a ratio of step times); NVIDIA, *CUDA C++
    Programming Guide*, "Asynchronous Concurrent Execution" (launches pipeline with kernels).

    Examples
    --------
    The lab's pair on the H200: 224 operators per ``book-draft`` step, 434 per ``book-lm``:

    >>> round(launch_bound_cost_ratio(224, 434), 3)
    0.516
    """
    d = _positive_int("draft_ops", draft_ops)
    t = _positive_int("target_ops", target_ops)
    return d / t
