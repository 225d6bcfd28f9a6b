r"""Reliability of a cluster of mixed parts: FIT rates summed, the MTBF they give, and the
shares of failure causes.

A part's failure rate is quoted in FIT, failures per :math:`10^9` device-hours. Parts that
fail independently and at constant rates fail together at the sum of their rates, so a
cluster of :math:`n_i` parts of each kind :math:`i` has

.. math::

    \lambda = \sum_i n_i\,\lambda_i, \qquad
    \text{MTBF} = \frac{10^9\ \text{h}}{\sum_i n_i\,\text{FIT}_i}

:func:`helpers.models.checkpointing.cluster_mtbf_s` is the one-kind case. The Llama 3 report
counts what interrupted a 16,384-GPU training run; :data:`LLAMA3_INTERRUPTIONS` holds its
table and :func:`cause_shares` turns counts into shares.

References
----------
* JEDEC JESD85 / JEP122: 1 FIT = one failure in :math:`10^9` device-hours.
* Dubey, A. et al. (2024), "The Llama 3 Herd of Models", arXiv:2407.21783, section 3.3.4 and
  table 5: 466 job interruptions in a 54-day snapshot of pre-training, 47 planned and 419
  unexpected, by component and category.

Library only: no page imports it.
"""

from __future__ import annotations

import math
from typing import Mapping

from . import _checks

__all__ = ["HOURS_PER_FIT", "fit_to_rate_per_s", "rate_to_fit", "system_fit",
           "system_mtbf_s", "observed_fit", "cause_shares", "category_counts",
           "LLAMA3_INTERRUPTIONS", "LLAMA3_SNAPSHOT_S", "LLAMA3_GPUS"]

#: One FIT is one failure per this many device-hours.
HOURS_PER_FIT = 1e9
_S_PER_H = 3600.0

#: Dubey et al. (2024), table 5: (component, category, interruption count) of the 419
#: unexpected interruptions, in the table's order. The table also prints a share for each
#: row; for "Faulty GPU" it prints 30.1 %, which is not 148 / 419 (35.3 %): see
#: tests/models/test_reliability_i23.py. The book keeps the counts, which add up to the 419
#: the text states.
LLAMA3_INTERRUPTIONS: tuple[tuple[str, str, int], ...] = (
    ("Faulty GPU", "GPU", 148),
    ("GPU HBM3 Memory", "GPU", 72),
    ("Software Bug", "Dependency", 54),
    ("Network Switch/Cable", "Network", 35),
    ("Host Maintenance", "Unplanned Maintenance", 32),
    ("GPU SRAM Memory", "GPU", 19),
    ("GPU System Processor", "GPU", 17),
    ("NIC", "Host", 7),
    ("NCCL Watchdog Timeouts", "Unknown", 7),
    ("Silent Data Corruption", "GPU", 6),
    ("GPU Thermal Interface + Sensor", "GPU", 6),
    ("SSD", "Host", 3),
    ("Power Supply", "Host", 3),
    ("Server Chassis", "Host", 2),
    ("IO Expansion Board", "Host", 2),
    ("Dependency", "Dependency", 2),
    ("CPU", "Host", 2),
    ("System Memory", "Host", 2),
)
#: The snapshot's length (54 days) and the GPUs in the job (16,384 H100s), section 3.3.4.
LLAMA3_SNAPSHOT_S = 54 * 86400.0
LLAMA3_GPUS = 16_384


def fit_to_rate_per_s(fit: float) -> float:
    r"""Failure rate (1/s) of a part rated ``fit`` FIT: :math:`\text{FIT} / (10^9 \cdot 3600\ \text{s})`.

    .. math:: \lambda = \text{FIT} / (10^9 \cdot 3600\ \text{s})

    Examples
    --------
    >>> fit_to_rate_per_s(3600.0)
    1e-09
    """
    return _checks.positive("fit", fit, allow_zero=True) / (HOURS_PER_FIT * _S_PER_H)


def rate_to_fit(rate_per_s: float) -> float:
    r"""FIT (failures per :math:`10^9` device-hours) of a failure rate given in 1/s.

    .. math:: \text{FIT} = \lambda \cdot 10^9 \cdot 3600\ \text{s}

    Examples
    --------
    >>> round(rate_to_fit(1e-9), 6)
    3600.0
    """
    return _checks.positive("rate_per_s", rate_per_s, allow_zero=True) * HOURS_PER_FIT * _S_PER_H


def _parts(fits: Mapping[str, float], counts: Mapping[str, int]):
    _checks.mapping("fits", fits)
    _checks.mapping("counts", counts)
    if not fits:
        raise ValueError("fits must name at least one kind of part")
    for name in counts:
        if name not in fits:
            raise ValueError(f"counts names {name!r}, which has no rate in fits "
                             f"(kinds: {sorted(fits)})")
    total = 0.0
    for name, fit in fits.items():
        f = _checks.positive(f"fits[{name!r}]", fit, allow_zero=True)
        n = _checks.integer(f"counts[{name!r}]", counts.get(name, 1), minimum=0)
        total += n * f
    return total


def system_fit(fits: Mapping[str, float], counts: Mapping[str, int]) -> float:
    r"""FIT (failures per :math:`10^9` hours) of a system of independent parts: :math:`\sum_i n_i\,\text{FIT}_i`.

    .. math:: \text{FIT}_\text{sys} = \sum_i n_i\,\text{FIT}_i

    Parameters
    ----------
    fits : mapping of str to float
        Each kind's rate (FIT, >= 0).
    counts : mapping of str to int
        How many of each kind (>= 0); a kind not named counts once.

    Returns
    -------
    float
        The system's FIT.

    Assumptions
    -----------
    Independent parts with constant (exponential) failure rates; any part's failure fails the
    system (a series system, as a synchronous training job is).

    References
    ----------
    JEDEC JESD85 (FIT); the series-system sum of rates.

    Examples
    --------
    A node of 8 GPUs at 500 FIT, 2 CPUs at 100 and 16 DIMMs at 50:

    >>> system_fit({"gpu": 500.0, "cpu": 100.0, "dimm": 50.0}, {"gpu": 8, "cpu": 2, "dimm": 16})
    5000.0
    """
    return _parts(fits, counts)


def system_mtbf_s(fits: Mapping[str, float], counts: Mapping[str, int]) -> float:
    r"""Mean time between failures (s) of a system of independent parts: :math:`10^9\ \text{h} / \text{FIT}_\text{sys}`.

    .. math:: \text{MTBF} = 10^9\ \text{h} / \textstyle\sum_i n_i\,\text{FIT}_i

    Returns ``math.inf`` when every rate is zero.

    Examples
    --------
    The node of :func:`system_fit` (5000 FIT) fails every 200,000 hours; 2,048 of them, every
    97.7 hours:

    >>> fits, node = {"gpu": 500.0, "cpu": 100.0, "dimm": 50.0}, {"gpu": 8, "cpu": 2, "dimm": 16}
    >>> system_mtbf_s(fits, node) / 3600
    200000.0
    >>> round(system_mtbf_s(fits, {k: 2048 * n for k, n in node.items()}) / 3600, 1)
    97.7
    """
    total = _parts(fits, counts)
    return math.inf if total == 0 else HOURS_PER_FIT * _S_PER_H / total


def observed_fit(n_failures: int, n_units: int, observed_s: float) -> float:
    r"""FIT of one unit estimated from a fleet: :math:`10^9\,k / (N\,T_\text{h})`.

    .. math:: \widehat{\text{FIT}} = 10^9\,k / (N\,T_\text{h})

    The maximum-likelihood rate of exponential failures, :math:`k` failures in :math:`N`
    units watched for :math:`T`, in FIT.

    Examples
    --------
    Llama 3's 268 GPU-category interruptions (table 5) on 16,384 GPUs in 54 days:

    >>> round(observed_fit(268, 16_384, 54 * 86400.0))
    12621
    """
    k = _checks.integer("n_failures", n_failures, minimum=0)
    n = _checks.positive_int("n_units", n_units)
    t = _checks.positive("observed_s", observed_s)
    return HOURS_PER_FIT * k / (n * t / _S_PER_H)


def cause_shares(counts: Mapping[str, int]) -> dict[str, float]:
    r"""Share (dimensionless) of each cause in a count of failures: :math:`k_i / \sum_j k_j`.

    .. math:: f_i = k_i / \sum_j k_j

    Examples
    --------
    >>> s = cause_shares({"GPU HBM3 Memory": 72, "rest": 347})
    >>> round(100 * s["GPU HBM3 Memory"], 1)
    17.2
    """
    _checks.mapping("counts", counts)
    if not counts:
        raise ValueError("counts must name at least one cause")
    checked = {name: _checks.integer(f"counts[{name!r}]", k, minimum=0)
               for name, k in counts.items()}
    total = sum(checked.values())
    if total == 0:
        raise ValueError("counts must add up to at least one failure")
    return {name: k / total for name, k in checked.items()}


def category_counts(rows) -> dict[str, int]:
    r"""Failures by category (count) from ``(component, category, count)`` rows such as
    :data:`LLAMA3_INTERRUPTIONS`.

    .. math:: k_c = \sum_{i \in c} k_i

    Examples
    --------
    >>> category_counts(LLAMA3_INTERRUPTIONS)["GPU"]
    268
    """
    _checks.sequence("rows", rows, min_len=1)
    out: dict[str, int] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, (tuple, list)) or len(row) != 3 or not isinstance(row[1], str):
            raise ValueError(f"rows[{i}] must be (component, category, count), got {row!r}")
        out[row[1]] = out.get(row[1], 0) + _checks.integer(f"rows[{i}] count", row[2], minimum=0)
    return out
