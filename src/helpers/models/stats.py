r"""Summary statistics for benchmark timings: percentiles, confidence intervals, outliers.

Timings of repeated runs are not normally distributed: they have a hard floor (the work
itself), a long right tail (interrupts, frequency changes, other processes) and occasional
huge outliers. The book therefore reports the **median** with a **distribution-free
confidence interval** from order statistics, flags outliers with the median absolute
deviation rather than the standard deviation (which the outliers themselves inflate), and
decides between two implementations with a confidence interval of their speedup.

Symbols (the page's notation): :math:`x_{(i)}` is the :math:`i`-th smallest of :math:`n`
timings, :math:`\tilde x` the sample median, :math:`c` the confidence level.

Introduced in {ref}`sec-measurement`.

References
----------
* Hyndman, R. J. and Fan, Y. (1996), "Sample Quantiles in Statistical Packages",
  The American Statistician 50(4), 361-365: definition 7, linear interpolation of the order
  statistics (numpy's and R's default).
* Conover, W. J. (1999), *Practical Nonparametric Statistics*, 3rd ed., Wiley, section 3.2:
  the confidence interval of a quantile from order statistics and the binomial distribution.
* Campbell, M. J. and Gardner, M. J. (1988), "Calculating confidence intervals for some
  non-parametric analyses", British Medical Journal 296, 1454-1456: the conservative interval
  of the median by ranks, tabulated with its exact level (n = 20: 6th to 15th value, 95.9 %).
* Iglewicz, B. and Hoaglin, D. C. (1993), *How to Detect and Handle Outliers*, ASQC Quality
  Press: the modified z-score :math:`0.6745\,(x - \tilde{x}) / \mathrm{MAD}` and the threshold
  3.5, as restated in the NIST/SEMATECH e-Handbook of Statistical Methods, section 1.3.5.17.
* Tukey, J. W. (1977), *Exploratory Data Analysis*, Addison-Wesley: the fences
  :math:`Q_1 - 1.5\,IQR`, :math:`Q_3 + 1.5\,IQR`.
* Student (1908), "The Probable Error of a Mean", Biometrika 6(1), 1-25: the t interval of a
  mean; critical values as tabulated in the NIST/SEMATECH e-Handbook, section 1.3.6.7.2.
* Efron, B. and Tibshirani, R. J. (1993), *An Introduction to the Bootstrap*, Chapman & Hall,
  chapter 13: the percentile bootstrap interval.

Used by: chapters/measurement.md, practice/method.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

import numpy as np

from ._checks import positive
from . import _checks

MAX_RESAMPLES = 10**6  # resamples of a bootstrap; more would take minutes and gigabytes

__all__ = [
    "as_samples", "percentile", "Summary", "summarize", "Interval", "binomial_cdf",
    "percentile_ci", "median_ci", "min_samples_for_ci", "normal_ppf", "student_t_cdf",
    "student_t_ppf", "mean_ci", "bootstrap_ci", "mad", "modified_z_scores", "mad_outliers",
    "tukey_fences", "relative_spread", "speedup_ci", "Comparison", "compare",
    "MODIFIED_Z_CONSTANT", "MODIFIED_Z_THRESHOLD", "least_squares",
]

#: Iglewicz and Hoaglin's constant: the 0.75 quantile of the standard normal, so that
#: ``MAD / 0.6745`` estimates the standard deviation of normal data.
MODIFIED_Z_CONSTANT = 0.6745
#: Iglewicz and Hoaglin's recommended cut-off for a potential outlier, ``|M| > 3.5``.
MODIFIED_Z_THRESHOLD = 3.5


def as_samples(samples: Sequence[float] | np.ndarray, *, name: str = "samples",
               min_n: int = 1) -> np.ndarray:
    """Validate and return ``samples`` as a 1-D float64 array (finite, at least ``min_n``).

    >>> as_samples([3, 1, 2]).tolist()
    [3.0, 1.0, 2.0]
    """
    if not isinstance(name, str):
        raise ValueError(f"name must be a str, got {name!r}")
    _checks.positive_int("min_n", min_n, minimum=0, maximum=2**62)
    arr = np.asarray(samples, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size < min_n:
        raise ValueError(f"{name} needs at least {min_n} values, got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def _check_level(confidence: float) -> float:
    c = _checks.as_float(confidence)
    if c is None:  # None, a bool, a string: the wrong type
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    confidence = c
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return confidence


def _check_q(q: float) -> float:
    v = _checks.as_float(q)
    if v is None:  # None, a bool, a string: the wrong type
        raise ValueError(f"q must be a percentage in [0, 100], got {q!r}")
    q = v
    if not 0.0 <= q <= 100.0:  # also rejects NaN
        raise ValueError(f"q must be a percentage in [0, 100], got {q!r}")
    return q


def percentile(samples, q: float) -> float:
    r"""The ``q``-th percentile (``q`` in 0-100) by linear interpolation of order statistics.

    .. math:: Q(p) = x_{(j)} + (h - j)\,(x_{(j+1)} - x_{(j)}), \qquad
              h = (n-1)\,p + 1,\; j = \lfloor h \rfloor,\; p = q/100

    (Hyndman and Fan's definition 7, numpy's default; the page labels it ``eq-meas-percentile``.)

    Parameters
    ----------
    samples : sequence of float
        The sample, in any unit; the result has the same unit.
    q : float
        Percentage in [0, 100]; 50 is the median.

    >>> percentile([1, 2, 3, 4], 50)
    2.5
    >>> percentile([10.0, 20.0, 30.0, 40.0, 50.0], 90)
    46.0
    """
    x = np.sort(as_samples(samples))
    q = _check_q(q)
    h = (x.size - 1) * q / 100.0
    lo = math.floor(h)
    hi = min(lo + 1, x.size - 1)
    return float(x[lo] + (h - lo) * (x[hi] - x[lo]))


@dataclass(frozen=True)
class Summary:
    """Order statistics and moments of a sample, in the sample's unit."""

    n: int
    mean: float
    std: float
    min: float
    p5: float
    p25: float
    median: float
    p75: float
    p95: float
    p99: float
    max: float

    @property
    def iqr(self) -> float:
        """Interquartile range, p75 - p25."""
        return self.p75 - self.p25


def summarize(samples) -> Summary:
    """Summary of a sample: n, mean, standard deviation (n - 1), and percentiles.

    >>> s = summarize([3.0, 1.0, 2.0, 4.0, 100.0])
    >>> s.median, s.mean
    (3.0, 22.0)
    """
    x = as_samples(samples)
    std = float(np.std(x, ddof=1)) if x.size > 1 else 0.0
    return Summary(
        n=int(x.size), mean=float(np.mean(x)), std=std, min=float(np.min(x)),
        p5=percentile(x, 5), p25=percentile(x, 25), median=percentile(x, 50),
        p75=percentile(x, 75), p95=percentile(x, 95), p99=percentile(x, 99), max=float(np.max(x)),
    )


class Interval(NamedTuple):
    """A confidence interval: bounds in the sample's unit and the confidence it carries.

    For order-statistic intervals ``confidence`` is the exact coverage achieved (at least the
    level asked for); for the t and bootstrap intervals it is the nominal level.
    """

    low: float
    high: float
    confidence: float

    def contains(self, value: float) -> bool:
        """True if ``low <= value <= high``."""
        return self.low <= value <= self.high

    @property
    def width(self) -> float:
        """``high - low``."""
        return self.high - self.low


def binomial_cdf(k: int, n: int, p: float = 0.5) -> float:
    """P(B <= k) for B ~ Binomial(n, p), summed exactly in log space.

    >>> round(binomial_cdf(5, 20), 4)
    0.0207
    """
    _checks.real("k", k, allow_inf=True)
    _checks.positive_int("n", n, minimum=0, maximum=10**7)
    _checks.fraction("p", p)
    if n < 0 or not float(n).is_integer():
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    _checks.real("k", k)
    n, k = int(n), math.floor(k)
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p in (0.0, 1.0):
        return 1.0 if p == 0.0 else 0.0
    return float(_binomial_cdf_table(n, p)[k])


def _binomial_cdf_table(n: int, p: float) -> np.ndarray:
    """``[P(B <= 0), ..., P(B <= n)]`` for B ~ Binomial(n, p), 0 < p < 1, in one pass."""
    i = np.arange(n + 1, dtype=np.float64)
    log_choose = np.array([math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1)
                           for j in range(n + 1)])
    log_pmf = log_choose + i * math.log(p) + (n - i) * math.log1p(-p)
    cdf = np.cumsum(np.exp(log_pmf))
    return np.minimum(cdf, 1.0)


def _ranks(n: int, p: float, confidence: float) -> tuple[int, int, float] | None:
    """1-based ranks (l, u) of the conservative equal-tailed interval, and its coverage."""
    alpha = (1.0 - confidence) / 2.0
    cdf = _binomial_cdf_table(n, p)
    # P(x_(l) > Q) = P(B <= l - 1): largest l with that tail <= alpha.
    lows = np.nonzero(cdf[:n] <= alpha + 1e-12)[0]
    # P(x_(u) < Q) = P(B >= u) = 1 - P(B <= u - 1): smallest u with that tail <= alpha.
    highs = np.nonzero(1.0 - cdf[:n] <= alpha + 1e-12)[0]
    if lows.size == 0 or highs.size == 0:
        return None
    low = int(lows[-1]) + 1
    high = int(highs[0]) + 1
    coverage = float(cdf[high - 1] - cdf[low - 1])
    return low, high, min(coverage, 1.0)


def min_samples_for_ci(q: float = 50.0, confidence: float = 0.95) -> int:
    r"""Fewest samples for which :func:`percentile_ci` exists at this percentile and level.

    The interval needs an order statistic below the percentile with tail probability at most
    :math:`(1-c)/2` on each side: :math:`(1-p)^n \le (1-c)/2` and :math:`p^n \le (1-c)/2`.

    >>> min_samples_for_ci(50, 0.95)     # the median
    6
    >>> min_samples_for_ci(99, 0.95)     # a p99 tail latency
    368
    """
    q = _check_q(q)
    confidence = _check_level(confidence)
    p = q / 100.0
    if p in (0.0, 1.0):
        raise ValueError(f"no finite sample gives a confidence interval of the {q}th percentile")
    alpha = (1.0 - confidence) / 2.0
    need = max(math.log(alpha) / math.log1p(-p), math.log(alpha) / math.log(p))
    n = max(1, math.ceil(need - 1e-9))
    return n


def percentile_ci(samples, q: float, confidence: float = 0.95) -> Interval:
    r"""Distribution-free confidence interval of the ``q``-th percentile from order statistics.

    With :math:`B \sim \mathrm{Binomial}(n, p)` counting the samples below the population
    percentile :math:`Q_p`, the interval :math:`[x_{(l)}, x_{(u)}]` covers :math:`Q_p` with
    probability :math:`P(l \le B \le u - 1)`, whatever the (continuous) distribution. The
    ranks are chosen conservatively, each tail at most :math:`(1-c)/2` (Conover 1999, section
    3.2). For a discrete sample (ties) the coverage is at least as large.

    Returns
    -------
    Interval
        ``(low, high, confidence)`` with the exact coverage achieved.

    Raises
    ------
    ValueError
        If ``n`` is too small for the level (see :func:`min_samples_for_ci`).

    >>> ci = percentile_ci(list(range(1, 501)), 99)
    >>> ci.low, ci.high, round(ci.confidence, 3)
    (490.0, 500.0, 0.98)
    """
    q = _check_q(q)
    confidence = _check_level(confidence)
    x = np.sort(as_samples(samples))
    p = q / 100.0
    ranks = _ranks(x.size, p, confidence) if 0.0 < p < 1.0 else None
    if ranks is None:
        need = min_samples_for_ci(q, confidence) if 0.0 < p < 1.0 else None
        what = f"at least {need} samples" if need else "a percentile strictly inside (0, 100)"
        raise ValueError(f"a {confidence:.0%} confidence interval of the {q:g}th percentile "
                         f"needs {what}, got {x.size}")
    low, high, coverage = ranks
    return Interval(float(x[low - 1]), float(x[high - 1]), coverage)


def median_ci(samples, confidence: float = 0.95) -> Interval:
    r"""Distribution-free confidence interval of the median from order statistics.

    .. math:: P\big(x_{(k)} \le m \le x_{(n-k+1)}\big) = 1 - 2\,P(B \le k-1),
              \qquad B \sim \mathrm{Binomial}(n, 1/2)

    whatever the distribution (Conover 1999, section 3.2; the page labels it
    ``eq-meas-median-ci``). The largest ``k`` whose coverage is at least ``confidence`` is
    used, so the coverage reported is the exact one, never below the level asked for.

    Returns
    -------
    Interval
        ``(low, high, confidence)``, the bounds in the sample's unit and the exact coverage.

    Raises ``ValueError`` if ``n`` is too small for the requested level (fewer than 6
    samples at 95 %).

    >>> lo, hi, cover = median_ci(list(range(1, 21)))   # n = 20: the 6th and 15th values
    >>> lo, hi, round(cover, 4)
    (6.0, 15.0, 0.9586)
    """
    return percentile_ci(samples, 50.0, confidence)


def normal_ppf(p: float) -> float:
    """Quantile of the standard normal distribution (bisection on ``math.erf``).

    >>> round(normal_ppf(0.975), 4)
    1.96
    """
    _checks.real("p", p)
    p = float(p)
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(-mid / math.sqrt(2)) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            return h
    raise RuntimeError(f"incomplete beta did not converge for a={a}, b={b}, x={x}")


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(ln_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(ln_front) * _betacf(b, a, 1.0 - x) / b


def _check_df(df: float) -> float:
    """Degrees of freedom: > 0, and ``math.inf`` (the normal limit) is accepted."""
    if _checks.as_float(df) == math.inf:
        return math.inf
    return positive("df", df)


def student_t_cdf(t: float, df: float) -> float:
    r"""CDF of Student's t distribution with ``df`` degrees of freedom.

    Uses :math:`P(|T| > t) = I_{\nu/(\nu + t^2)}(\nu/2, 1/2)`, the regularized incomplete beta
    function, evaluated by its continued fraction.

    ``df = math.inf`` is the limit: the standard normal CDF.

    >>> round(student_t_cdf(2.262157, 9), 5)
    0.975
    >>> round(student_t_cdf(1.959964, math.inf), 5)
    0.975
    """
    _checks.real("t", t, allow_inf=True)
    df = _check_df(df)
    t = float(t)
    if math.isnan(t):
        raise ValueError("t must not be NaN")
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    if math.isinf(df):
        return 0.5 * math.erfc(-t / math.sqrt(2.0))
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def student_t_ppf(p: float, df: float) -> float:
    """Quantile of Student's t distribution (bisection on :func:`student_t_cdf`).

    ``df = math.inf`` is the limit, the standard normal quantile (the last row of a t table).

    >>> round(student_t_ppf(0.975, 9), 3)   # the familiar table value
    2.262
    >>> round(student_t_ppf(0.975, math.inf), 3)
    1.96
    """
    df = _check_df(df)
    if not math.isinf(df):
        _checks.at_most("df", df, 1e300)
    _checks.real("p", p)
    p = float(p)
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    if math.isinf(df):
        return normal_ppf(p)
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -student_t_ppf(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while student_t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if student_t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * max(1.0, hi):
            break
    return (lo + hi) / 2


def mean_ci(samples, confidence: float = 0.95) -> Interval:
    r"""Student-t confidence interval of the mean.

    .. math:: \bar x \pm t_{(1+c)/2,\;n-1}\; s / \sqrt n

    (the page labels it ``eq-meas-mean-ci``). Assumes independent samples from a distribution
    close enough to normal; for timings with a heavy tail prefer :func:`median_ci`.

    >>> lo, hi, level = mean_ci([9.0, 10.0, 11.0, 10.0, 10.0])
    >>> round(lo, 3), round(hi, 3), level
    (9.122, 10.878, 0.95)
    """
    confidence = _check_level(confidence)
    x = as_samples(samples, min_n=2)
    m = float(np.mean(x))
    s = float(np.std(x, ddof=1))
    half = student_t_ppf((1 + confidence) / 2, x.size - 1) * s / math.sqrt(x.size)
    return Interval(m - half, m + half, confidence)


def _resampled(x: np.ndarray, statistic, n_resamples: int, rng) -> np.ndarray:
    idx = rng.integers(0, x.size, size=(n_resamples, x.size))
    if statistic is np.median or statistic is np.mean:
        return statistic(x[idx], axis=1)
    return np.array([statistic(x[row]) for row in idx], dtype=np.float64)


def _check_seed(seed) -> None:
    """A bootstrap seed is a Python or numpy integer >= 0 (numpy's SeedSequence takes no float)."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")


def _check_resamples(n_resamples: int) -> int:
    if not (isinstance(n_resamples, (int, np.integer)) and not isinstance(n_resamples, bool)
            and 100 <= n_resamples <= MAX_RESAMPLES):
        raise ValueError(f"n_resamples must be an integer in [100, {MAX_RESAMPLES}], "
                         f"got {n_resamples!r}")
    return int(n_resamples)


def bootstrap_ci(samples, statistic: Callable[[np.ndarray], float] = np.median, *,
                 confidence: float = 0.95, n_resamples: int = 2000,
                 seed: int = 0) -> Interval:
    """Percentile-bootstrap confidence interval of any ``statistic`` (seeded, reproducible).

    Efron and Tibshirani (1993), chapter 13.

    >>> lo, hi, _ = bootstrap_ci([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    >>> lo <= 5.0 <= hi
    True
    """
    if not callable(statistic):
        raise ValueError(f"statistic must be a callable, got {statistic!r}")
    _check_seed(seed)
    confidence = _check_level(confidence)
    x = as_samples(samples, min_n=2)
    n_resamples = _check_resamples(n_resamples)
    stats = _resampled(x, statistic, n_resamples, np.random.default_rng(seed))
    alpha = (1 - confidence) / 2
    return Interval(percentile(stats, 100 * alpha), percentile(stats, 100 * (1 - alpha)),
                    confidence)


def mad(samples) -> float:
    """Median absolute deviation from the median (unscaled).

    >>> mad([1, 2, 3, 4, 100])
    1.0
    """
    x = as_samples(samples)
    med = float(np.median(x))
    return float(np.median(np.abs(x - med)))


def modified_z_scores(samples) -> np.ndarray:
    r"""Iglewicz-Hoaglin modified z-scores, :math:`M_i = 0.6745\,(x_i - \tilde x)/\mathrm{MAD}`.

    (The page labels it ``eq-meas-modified-z``.) Where MAD is zero (more than half the values
    equal, common for timings quantized by a coarse clock), every value off the median gets
    an infinite score and the median itself zero.

    >>> modified_z_scores([1.0, 2.0, 3.0]).round(4).tolist()
    [-0.6745, 0.0, 0.6745]
    """
    x = as_samples(samples)
    med = float(np.median(x))
    m = mad(x)
    dev = x - med
    if m == 0.0:
        scores = np.zeros_like(dev)
        scores[dev > 0] = np.inf
        scores[dev < 0] = -np.inf
        return scores
    return MODIFIED_Z_CONSTANT * dev / m


def mad_outliers(samples, threshold: float = MODIFIED_Z_THRESHOLD) -> np.ndarray:
    """Boolean mask of outliers: ``|modified z| > threshold`` (3.5, Iglewicz and Hoaglin).

    >>> mad_outliers([10, 11, 10, 12, 11, 10, 95]).tolist()
    [False, False, False, False, False, False, True]
    """
    _checks.positive("threshold", threshold, allow_zero=True)
    threshold = float(threshold)
    if not threshold > 0:
        raise ValueError(f"threshold must be > 0, got {threshold!r}")
    return np.abs(modified_z_scores(samples)) > threshold


def tukey_fences(samples, k: float = 1.5) -> tuple[float, float]:
    """Tukey's fences ``(Q1 - k IQR, Q3 + k IQR)``; values outside are outliers.

    >>> tukey_fences([1, 2, 3, 4, 5, 6, 7, 8])
    (-2.5, 11.5)
    """
    _checks.positive("k", k, allow_zero=True)
    k = float(k)
    if not k > 0:
        raise ValueError(f"k must be > 0, got {k!r}")
    x = as_samples(samples)
    q1, q3 = percentile(x, 25), percentile(x, 75)
    return q1 - k * (q3 - q1), q3 + k * (q3 - q1)


def relative_spread(samples) -> float:
    """Interquartile range over the median: a unitless measure of run-to-run noise.

    >>> relative_spread([9, 10, 10, 10, 11])
    0.0
    >>> relative_spread([8, 9, 10, 11, 12])
    0.2
    """
    x = as_samples(samples)
    med = percentile(x, 50)
    if med == 0:
        raise ValueError("relative_spread is undefined for a zero median")
    return (percentile(x, 75) - percentile(x, 25)) / abs(med)


def speedup_ci(baseline, candidate, *, confidence: float = 0.95, n_resamples: int = 2000,
               seed: int = 0) -> Interval:
    r"""Percentile-bootstrap interval of the speedup :math:`\tilde t_{\mathrm{base}} / \tilde t_{\mathrm{cand}}`.

    Each bootstrap replicate resamples both samples independently and takes the ratio of their
    medians (Efron and Tibshirani 1993, chapter 13); the interval is the replicates'
    :math:`(1-c)/2` and :math:`(1+c)/2` percentiles. A speedup above 1 means the candidate is
    faster. Both samples must be positive times.

    >>> base = [10.0, 10.5, 9.8, 10.2, 10.1, 9.9, 10.3, 10.0]
    >>> lo, hi, level = speedup_ci(base, [t / 2 for t in base])
    >>> lo < 2.0 < hi, level
    (True, 0.95)
    """
    _check_seed(seed)
    confidence = _check_level(confidence)
    a = as_samples(baseline, name="baseline", min_n=2)
    b = as_samples(candidate, name="candidate", min_n=2)
    if np.any(a <= 0) or np.any(b <= 0):
        raise ValueError("speedup_ci needs positive times in both samples")
    n_resamples = _check_resamples(n_resamples)
    rng = np.random.default_rng(seed)
    ratio = _resampled(a, np.median, n_resamples, rng) / _resampled(b, np.median, n_resamples, rng)
    alpha = (1 - confidence) / 2
    return Interval(percentile(ratio, 100 * alpha), percentile(ratio, 100 * (1 - alpha)),
                    confidence)


@dataclass(frozen=True)
class Comparison:
    """The outcome of :func:`compare`: a speedup, its interval and what it allows one to say."""

    speedup: float  # median(baseline) / median(candidate); > 1: the candidate is faster
    ci: Interval
    min_effect: float
    verdict: str  # "faster", "slower", "equivalent" or "inconclusive"
    baseline_median: float
    candidate_median: float
    baseline_ci: Interval
    candidate_ci: Interval

    @property
    def medians_cis_overlap(self) -> bool:
        """Whether the two medians' own intervals overlap (a cruder, conservative check)."""
        return not (self.baseline_ci.high < self.candidate_ci.low
                    or self.candidate_ci.high < self.baseline_ci.low)


def compare(baseline, candidate, *, min_effect: float = 0.05, confidence: float = 0.95,
            n_resamples: int = 2000, seed: int = 0) -> Comparison:
    r"""Decide whether ``candidate`` is faster than ``baseline`` by at least ``min_effect``.

    With :math:`[L, H]` the confidence interval of the speedup (:func:`speedup_ci`) and
    :math:`\delta` the smallest speedup worth acting on (``min_effect``, e.g. 0.05 for 5 %):

    * ``"faster"`` if :math:`L > 1 + \delta`: faster by at least :math:`\delta`, with confidence;
    * ``"slower"`` if :math:`H < 1/(1 + \delta)`;
    * ``"equivalent"`` if :math:`1/(1+\delta) < L` and :math:`H < 1 + \delta`: any difference is
      smaller than the one that matters;
    * ``"inconclusive"`` otherwise: more repetitions or a quieter machine are needed.

    This is the interval form of an equivalence test: it separates "no difference that
    matters" from "not enough data", which a bare significance test cannot.

    >>> base = [10.0, 10.5, 9.8, 10.2, 10.1, 9.9, 10.3, 10.0, 10.4, 9.7]
    >>> compare(base, [t / 1.5 for t in base]).verdict
    'faster'
    >>> compare(base, base).verdict
    'equivalent'
    """
    _checks.real("min_effect", min_effect)
    _check_seed(seed)
    min_effect = float(min_effect)
    if not 0.0 <= min_effect < 10.0:
        raise ValueError(f"min_effect must be in [0, 10), got {min_effect!r}")
    ci = speedup_ci(baseline, candidate, confidence=confidence, n_resamples=n_resamples,
                    seed=seed)
    a, b = as_samples(baseline), as_samples(candidate)
    hi_bar, lo_bar = 1.0 + min_effect, 1.0 / (1.0 + min_effect)
    if ci.low > hi_bar:
        verdict = "faster"
    elif ci.high < lo_bar:
        verdict = "slower"
    elif ci.low > lo_bar and ci.high < hi_bar:
        verdict = "equivalent"
    else:
        verdict = "inconclusive"
    med_a, med_b = percentile(a, 50), percentile(b, 50)

    def _ci(x):
        try:
            return median_ci(x, confidence)
        except ValueError:  # too few samples for an order-statistic interval
            return Interval(float(x.min()), float(x.max()), float("nan"))

    return Comparison(speedup=med_a / med_b, ci=ci, min_effect=min_effect, verdict=verdict,
                      baseline_median=med_a, candidate_median=med_b,
                      baseline_ci=_ci(a), candidate_ci=_ci(b))


def least_squares(design, target) -> list[float]:
    r"""The coefficients :math:`\hat\beta` minimising :math:`\lVert X\beta - y\rVert_2`, the same
    on every machine.

    .. math:: \hat\beta = \arg\min_\beta \lVert X\beta - y \rVert_2 = R^{-1} Q^\top y,
              \quad X = QR

    The book's fits (a launch cost and a per-kernel cost, alpha and beta of a collective, the
    pipe model's overhead cycles) feed numbers that every page compares digit for digit, so they
    cannot go through LAPACK: ``numpy.linalg.lstsq`` takes OpenBLAS's kernels for the CPU it runs
    on, whose last digits differ between CPU families. This is a Householder QR in Python floats
    (additions, products, quotients and square roots, each correctly rounded by IEEE 754), so
    any x86 machine gives the same bits.

    Parameters
    ----------
    design : sequence of rows
        :math:`X`, ``m`` rows of ``n`` finite numbers, ``m >= n >= 1``, of full column rank.
    target : sequence of float
        :math:`y`, ``m`` finite numbers.

    Returns
    -------
    list of float
        :math:`\hat\beta`, ``n`` coefficients.

    Assumptions
    -----------
    Full column rank (a column that is a combination of the others raises ``ValueError``).

    References
    ----------
    Golub and Van Loan (2013), *Matrix Computations*, 4th ed., section 5.3.3 (least squares by
    Householder QR).

    Examples
    --------
    >>> [round(b, 12) for b in least_squares([[1, 1], [1, 2], [1, 3]], [3, 5, 7])]
    [1.0, 2.0]
    """
    def floats(name, seq):
        try:
            return [float(v) for v in _checks.sequence(name, seq)]
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a sequence of numbers, got {seq!r}") from None

    a = [floats("design (each row)", row) for row in _checks.sequence("design", design)]
    y = floats("target", target)
    m = len(a)
    n = len(a[0]) if m else 0
    if n < 1 or any(len(row) != n for row in a):
        raise ValueError(f"design must be m rows of n >= 1 numbers each, got {design!r}")
    if len(y) != m:
        raise ValueError(f"target must have one value per row of design ({m}), got {len(y)}")
    if m < n:
        raise ValueError(f"design needs at least as many rows as columns, got {m} x {n}")
    if not all(math.isfinite(v) for row in a for v in row) or not all(map(math.isfinite, y)):
        raise ValueError("design and target must be finite")
    col_norms = [math.sqrt(math.fsum(row[j] * row[j] for row in a)) for j in range(n)]
    for j in range(n):
        col = [a[i][j] for i in range(j, m)]
        norm = math.sqrt(math.fsum(v * v for v in col))
        if norm <= 1e-12 * col_norms[j]:
            raise ValueError(f"design is rank-deficient: column {j} depends on the columns before it")
        alpha = -norm if col[0] >= 0 else norm
        v = [col[0] - alpha] + col[1:]
        vv = math.fsum(x * x for x in v)
        for k in range(j, n):
            d = 2.0 * math.fsum(v[i - j] * a[i][k] for i in range(j, m)) / vv
            for i in range(j, m):
                a[i][k] -= d * v[i - j]
        d = 2.0 * math.fsum(v[i - j] * y[i] for i in range(j, m)) / vv
        for i in range(j, m):
            y[i] -= d * v[i - j]
    beta = [0.0] * n
    for j in reversed(range(n)):
        beta[j] = (y[j] - math.fsum(a[j][k] * beta[k] for k in range(j + 1, n))) / a[j][j]
    return beta
