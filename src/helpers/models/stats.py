r"""Summary statistics for benchmark timings: percentiles, confidence intervals, outliers.

Timings of repeated runs are not normally distributed: they have a hard floor (the work
itself), a long right tail (interrupts, frequency changes, other processes) and occasional
huge outliers. The book therefore reports the **median** with a **distribution-free
confidence interval** from order statistics, and flags outliers with the median absolute
deviation rather than the standard deviation, which the outliers themselves inflate.

Introduced in {ref}`sec-measurement`.

References
----------
* Hyndman, R. J. and Fan, Y. (1996), "Sample Quantiles in Statistical Packages",
  The American Statistician 50(4): the linear interpolation of definition 7 (numpy's default).
* Conover, W. J. (1999), *Practical Nonparametric Statistics*, 3rd ed., section 3.2: the
  confidence interval of a quantile from order statistics and the binomial distribution.
* Iglewicz, B. and Hoaglin, D. C. (1993), *How to Detect and Handle Outliers*: the modified
  z-score :math:`0.6745\,(x - \tilde{x}) / \mathrm{MAD}` and the threshold 3.5.
* Tukey, J. W. (1977), *Exploratory Data Analysis*: the fences :math:`Q_1 - 1.5\,IQR`,
  :math:`Q_3 + 1.5\,IQR`.
* Student (1908), "The Probable Error of a Mean", Biometrika 6(1): the t interval of a mean.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

__all__ = [
    "as_samples", "percentile", "Summary", "summarize", "median_ci", "mean_ci",
    "bootstrap_ci", "mad", "modified_z_scores", "mad_outliers", "tukey_fences",
    "relative_spread", "binomial_cdf", "normal_ppf", "student_t_cdf", "student_t_ppf",
]


def as_samples(samples: Sequence[float] | np.ndarray, *, name: str = "samples",
               min_n: int = 1) -> np.ndarray:
    """Validate and return ``samples`` as a 1-D float64 array (finite, at least ``min_n``)."""
    arr = np.asarray(samples, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size < min_n:
        raise ValueError(f"{name} needs at least {min_n} values, got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def _check_level(confidence: float) -> float:
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return confidence


def percentile(samples, q: float) -> float:
    r"""The ``q``-th percentile (0-100) by linear interpolation between order statistics.

    .. math:: Q(p) = x_{(\lfloor h \rfloor)} + (h - \lfloor h \rfloor)
              (x_{(\lfloor h \rfloor + 1)} - x_{(\lfloor h \rfloor)}), \quad h = (n-1)p + 1

    (Hyndman and Fan's definition 7, numpy's default.)

    >>> percentile([1, 2, 3, 4], 50)
    2.5
    >>> percentile([10.0, 20.0, 30.0, 40.0, 50.0], 90)
    46.0
    """
    x = np.sort(as_samples(samples))
    q = float(q)
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"q must be in [0, 100], got {q!r}")
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


def binomial_cdf(k: int, n: int, p: float = 0.5) -> float:
    """P(B <= k) for B ~ Binomial(n, p), summed exactly in log space.

    >>> round(binomial_cdf(5, 20), 4)
    0.0207
    """
    if n < 0 or not float(n).is_integer():
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p in (0.0, 1.0):
        return 1.0 if p == 0.0 else 0.0
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
            + i * math.log(p) + (n - i) * math.log1p(-p) for i in range(k + 1)]
    top = max(logs)
    return min(1.0, math.exp(top) * sum(math.exp(v - top) for v in logs))


def median_ci(samples, confidence: float = 0.95) -> tuple[float, float, float]:
    r"""Distribution-free confidence interval of the median from order statistics.

    The interval :math:`[x_{(k)}, x_{(n-k+1)}]` covers the population median with probability
    :math:`1 - 2\,P(B \le k-1)`, :math:`B \sim \mathrm{Binomial}(n, 1/2)`, whatever the
    distribution (Conover 1999, section 3.2). The largest ``k`` whose coverage is at least
    ``confidence`` is used.

    Returns
    -------
    (low, high, coverage): the bounds in the sample's unit and the exact coverage achieved.

    Raises ``ValueError`` if ``n`` is too small for the requested level (fewer than 6 samples
    at 95 %).

    >>> lo, hi, cover = median_ci(list(range(1, 21)))   # n = 20: the 6th and 15th values
    >>> lo, hi, round(cover, 4)
    (6.0, 15.0, 0.9586)
    """
    confidence = _check_level(confidence)
    x = np.sort(as_samples(samples))
    n = x.size
    best = None
    for k in range(1, n // 2 + 1):
        coverage = 1.0 - 2.0 * binomial_cdf(k - 1, n)
        if coverage >= confidence:
            best = (k, coverage)
        else:
            break
    if best is None:
        need = next(m for m in range(1, 10_000) if 1.0 - 2.0 * binomial_cdf(0, m) >= confidence)
        raise ValueError(
            f"a {confidence:.0%} confidence interval of the median needs at least {need} "
            f"samples, got {n}"
        )
    k, coverage = best
    return float(x[k - 1]), float(x[n - k]), float(coverage)


def normal_ppf(p: float) -> float:
    """Quantile of the standard normal distribution (bisection on ``math.erf``).

    >>> round(normal_ppf(0.975), 4)
    1.96
    """
    p = float(p)
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 0.5 * (1 + math.erf(mid / math.sqrt(2))) < p:
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
    for m in range(1, 10_000):
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
            break
    return h


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


def student_t_cdf(t: float, df: float) -> float:
    """CDF of Student's t distribution with ``df`` degrees of freedom.

    >>> round(student_t_cdf(2.262157, 9), 5)
    0.975
    """
    if not df > 0:
        raise ValueError(f"df must be > 0, got {df!r}")
    t = float(t)
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def student_t_ppf(p: float, df: float) -> float:
    """Quantile of Student's t distribution (bisection on :func:`student_t_cdf`).

    >>> round(student_t_ppf(0.975, 9), 3)   # the familiar table value
    2.262
    """
    p = float(p)
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    if not df > 0:
        raise ValueError(f"df must be > 0, got {df!r}")
    if p == 0.5:
        return 0.0
    lo, hi = -1.0, 1.0
    while student_t_cdf(lo, df) > p:
        lo *= 2
    while student_t_cdf(hi, df) < p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if student_t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def mean_ci(samples, confidence: float = 0.95) -> tuple[float, float]:
    r"""Student-t confidence interval of the mean: :math:`\bar x \pm t_{(1+c)/2,\,n-1}\, s/\sqrt n`.

    Assumes independent samples from a distribution close enough to normal; for timings with
    a heavy tail prefer :func:`median_ci`.

    >>> lo, hi = mean_ci([9.0, 10.0, 11.0, 10.0, 10.0])
    >>> round(lo, 3), round(hi, 3)
    (9.122, 10.878)
    """
    confidence = _check_level(confidence)
    x = as_samples(samples, min_n=2)
    m = float(np.mean(x))
    half = student_t_ppf((1 + confidence) / 2, x.size - 1) * float(np.std(x, ddof=1)) / math.sqrt(x.size)
    return m - half, m + half


def bootstrap_ci(samples, statistic: Callable[[np.ndarray], float] = np.median, *,
                 confidence: float = 0.95, n_resamples: int = 2000,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile-bootstrap confidence interval of any ``statistic`` (seeded, reproducible).

    Efron, B. and Tibshirani, R. J. (1993), *An Introduction to the Bootstrap*, chapter 13.
    """
    confidence = _check_level(confidence)
    x = as_samples(samples, min_n=2)
    if n_resamples < 100:
        raise ValueError(f"n_resamples must be >= 100, got {n_resamples}")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(n_resamples, x.size))
    stats = np.array([statistic(x[row]) for row in idx], dtype=np.float64)
    alpha = (1 - confidence) / 2
    return percentile(stats, 100 * alpha), percentile(stats, 100 * (1 - alpha))


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

    Where MAD is zero (more than half the values equal), every value off the median gets
    an infinite score and the median itself zero.
    """
    x = as_samples(samples)
    med = float(np.median(x))
    m = mad(x)
    dev = x - med
    if m == 0.0:
        return np.where(dev == 0.0, 0.0, np.sign(dev) * np.inf)
    return 0.6745 * dev / m


def mad_outliers(samples, threshold: float = 3.5) -> np.ndarray:
    """Boolean mask of outliers: ``|modified z| > threshold`` (3.5, Iglewicz and Hoaglin).

    >>> mad_outliers([10, 11, 10, 12, 11, 10, 95]).tolist()
    [False, False, False, False, False, False, True]
    """
    if not threshold > 0:
        raise ValueError(f"threshold must be > 0, got {threshold!r}")
    return np.abs(modified_z_scores(samples)) > threshold


def tukey_fences(samples, k: float = 1.5) -> tuple[float, float]:
    """Tukey's fences ``(Q1 - k IQR, Q3 + k IQR)``; values outside are outliers.

    >>> tukey_fences([1, 2, 3, 4, 5, 6, 7, 8])
    (-2.5, 11.5)
    """
    if not k > 0:
        raise ValueError(f"k must be > 0, got {k!r}")
    x = as_samples(samples)
    q1, q3 = percentile(x, 25), percentile(x, 75)
    return q1 - k * (q3 - q1), q3 + k * (q3 - q1)


def relative_spread(samples) -> float:
    """Interquartile range over the median: a unitless measure of run-to-run noise.

    >>> relative_spread([9, 10, 10, 10, 11])
    0.0
    """
    x = as_samples(samples)
    med = percentile(x, 50)
    if med == 0:
        raise ValueError("relative_spread is undefined for a zero median")
    return (percentile(x, 75) - percentile(x, 25)) / abs(med)
