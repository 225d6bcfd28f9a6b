"""Every public model function refuses bad input with a clear ``ValueError`` (issue 15, item 4).

The test finds the functions itself: every function named in a ``helpers.models`` module's
``__all__`` and defined there. It needs one valid call of each, which it harvests by running
the module's doctests with the public functions wrapped to record their first successful call
(``EXAMPLES`` below adds calls for functions without a doctest). A public function with no
valid example fails ``test_every_public_function_has_a_valid_example``, so a new function
cannot skip the fuzz.

Then, for each argument in turn, the valid call is repeated with a bad value in its place:

* values that are never valid (NaN, None, a bool, a numeric string such as ``"1e12"``, an
  unknown name for a choice, a sequence with a NaN in it, sequences of different lengths)
  must raise ``ValueError`` whose message names the argument;
* values that may be valid for some argument (0, negative numbers, +-inf, huge and tiny
  numbers, an empty sequence) must either raise a ``ValueError`` (naming the argument, or
  an impossible combination of arguments such as weights larger than the memory) or return
  a result with no NaN in it;
* no call may raise anything else, warn, or run longer than ``CALL_LIMIT_S``.

A fixed set of bad values is swept exhaustively; hypothesis adds random numbers on top.
``python tests/models/test_bad_input.py`` prints the counts by outcome (the survey).
"""

from __future__ import annotations

import dataclasses
import doctest
import functools
import importlib
import inspect
import math
import pkgutil
import re
import resource
import signal
import sys
import warnings
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers.models

if not hasattr(signal, "setitimer"):  # the per-call time limit needs SIGALRM (POSIX)
    pytest.skip("needs signal.setitimer to bound each call's time", allow_module_level=True)

CALL_LIMIT_S = 2.0  # one bad call that runs longer than this counts as a hang
MEMORY_HEADROOM_BYTES = 4 * 2**30  # address space a bad call may add before it fails

MODULES = tuple(
    importlib.import_module(f"helpers.models.{info.name}")
    for info in pkgutil.iter_modules(helpers.models.__path__)
    if not info.name.startswith("_")  # _checks is tested by test__checks.py
)

# Functions exempt from the fuzz, each with the reason. Only functions that take no
# argument, or no numeric one, may be listed here.
EXEMPT: dict[str, str] = {}

# Arguments that legitimately take free text (a label, not a choice among names): an
# unknown string there is not an error.
FREE_TEXT: set[tuple[str, str]] = {
    ("stats.as_samples", "name"),  # the name its own error messages use
}

# Arguments where NaN is a legitimate value with a legitimate NaN result: rounding or encoding
# NaN into a number format (the format has NaN encodings; the numerics page shows them).
NAN_VALID: set[tuple[str, str]] = {
    ("numerics.round_to_format", "x"),
    ("numerics.encode", "value"),
}

# Functions whose sequence arguments of equal length in the example are not paired: two
# independent samples may have different sizes.
UNPAIRED: set[str] = {"stats.compare", "stats.speedup_ci"}

# Valid calls for public functions whose doctests do not call them: "module.function" ->
# (args, kwargs). Filled where the harvest finds none.
EXAMPLES: dict[str, tuple[tuple, dict]] = {
    "simd.affine_time_s": ((1000.0, 1e-6, 1e-9), {}),  # its doctest lives in crossover_elements
}


def public_functions():
    """(qualified name, function) for every public function of every model module."""
    for mod in MODULES:
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if inspect.isfunction(obj) and obj.__module__ == mod.__name__:
                yield f"{mod.__name__.rsplit('.', 1)[1]}.{name}", obj


FUNCTIONS = dict(public_functions())


# --- harvest: one valid call of each function, from the doctests ---------------------------

def _harvest() -> dict[str, tuple[tuple, dict]]:
    found: dict[str, tuple[tuple, dict]] = {}
    finder = doctest.DocTestFinder(exclude_empty=True)
    for mod in MODULES:
        short = mod.__name__.rsplit(".", 1)[1]
        globs = dict(vars(mod))

        def wrap(qual, fn):
            @functools.wraps(fn)
            def recorder(*args, **kwargs):
                result = fn(*args, **kwargs)
                found.setdefault(qual, (args, kwargs))
                return result
            return recorder

        for qual, fn in FUNCTIONS.items():
            if qual.startswith(short + "."):
                globs[fn.__name__] = wrap(qual, fn)
        runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.ELLIPSIS
                                       | doctest.NORMALIZE_WHITESPACE)
        for test in finder.find(mod, mod.__name__, globs=globs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                runner.run(test, out=lambda s: None)
    for qual, call in EXAMPLES.items():
        found.setdefault(qual, call)
    return found


CALLS = _harvest()


# --- bad values ---------------------------------------------------------------------------

NEVER_VALID = "never valid"
MAYBE_VALID = "maybe valid"


class _Unknown:
    """An object of no type any model expects."""

    def __repr__(self):
        return "<unknown object>"


def _is_number(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def _is_sequence(x) -> bool:
    return isinstance(x, (list, tuple, np.ndarray)) and not _is_namedtuple(x)


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _numeric_bad(example):
    """(value, kind) pairs to put in place of a number."""
    yield math.nan, NEVER_VALID
    yield None, NEVER_VALID
    yield True, NEVER_VALID
    yield "1e12", NEVER_VALID
    yield _Unknown(), NEVER_VALID
    yield 0, MAYBE_VALID
    yield -1, MAYBE_VALID
    yield -0.5, MAYBE_VALID
    yield 0.5, MAYBE_VALID
    yield math.inf, MAYBE_VALID
    yield -math.inf, MAYBE_VALID
    yield 10**30, MAYBE_VALID
    yield 2**63, MAYBE_VALID  # one past int64
    yield 123456789.0, MAYBE_VALID  # a large but plausible size: loops and allocations over it
    yield 1e15, MAYBE_VALID
    yield 1e300, MAYBE_VALID
    yield 1.7976931348623157e308, MAYBE_VALID  # the largest float: products overflow
    yield 1e-300, MAYBE_VALID
    yield 5e-324, MAYBE_VALID  # the smallest subnormal: quotients overflow


def _sequence_bad(example, others, paired=True):
    yield None, NEVER_VALID
    yield "1e12", NEVER_VALID
    yield [], MAYBE_VALID
    flat = list(np.asarray(example, dtype=object).ravel()) if len(example) else []
    if flat and all(_is_number(v) for v in flat):
        arr = np.array(example, dtype=np.float64)
        poisoned = arr.copy()
        poisoned.flat[-1] = math.nan
        yield _like(example, poisoned), NEVER_VALID
        negative = arr.copy()
        negative.flat[-1] = -1.0
        yield _like(example, negative), MAYBE_VALID
        with_none = list(np.asarray(example, dtype=object).ravel())
        with_none[-1] = None
        if np.ndim(example) == 1:
            yield _like(example, with_none), NEVER_VALID
    # paired sequences: another argument of the same length means this one must match it
    if paired and len(example) > 1 and any(_is_sequence(o) and len(o) == len(example) for o in others):
        yield _like(example, list(example)[:-1]), NEVER_VALID


def _like(example, values):
    if isinstance(example, np.ndarray):
        return np.array(values, dtype=example.dtype if not isinstance(values, list) or
                        all(v is not None for v in values) else object)
    if isinstance(example, tuple):
        return tuple(values) if not isinstance(values, np.ndarray) else tuple(values.tolist())
    return list(values) if not isinstance(values, np.ndarray) else values.tolist()


def _string_bad(qual, name):
    yield None, NEVER_VALID
    yield 1.0, NEVER_VALID
    yield "no-such-choice", MAYBE_VALID if (qual, name) in FREE_TEXT else NEVER_VALID


def bad_values(qual, name, example, others, none_valid=False):
    """(value, kind) pairs to substitute for argument ``name`` whose valid value is ``example``.

    ``none_valid``: the argument is optional (its default is None), so None is a valid value.
    """
    for value, kind in _bad_values(qual, name, example, others):
        if value is None and none_valid:
            continue
        if (qual, name) in NAN_VALID and isinstance(value, float) and math.isnan(value):
            continue
        yield value, kind


def _bad_values(qual, name, example, others):
    if isinstance(example, bool):
        yield None, NEVER_VALID
        yield "yes", NEVER_VALID
    elif _is_number(example):
        yield from _numeric_bad(example)
    elif isinstance(example, str):
        yield from _string_bad(qual, name)
    elif _is_sequence(example):
        yield from _sequence_bad(example, others, paired=qual not in UNPAIRED)
    elif example is None:
        return  # an optional argument left at None: nothing to break
    else:  # a dataclass, a dict, a callable, ...
        yield None, NEVER_VALID
        yield 1.0, NEVER_VALID


# --- one bad call -------------------------------------------------------------------------

CLEAR, COMBINATION, OK, UNCLEAR, CRASH, HANG, SILENT = (
    "clear ValueError", "ValueError for an impossible combination", "valid result",
    "ValueError not naming the argument", "obscure crash", "hang", "silently wrong result")
ACCEPTABLE = {CLEAR, COMBINATION, OK}


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout


def _has_nan(x, depth=0) -> bool:
    if depth > 6:
        return False
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return False
    if isinstance(x, (float, np.floating)):
        return math.isnan(x)
    if isinstance(x, complex):
        return math.isnan(x.real) or math.isnan(x.imag)
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "fc" and bool(np.isnan(x).any()) or (
            x.dtype == object and any(_has_nan(v, depth + 1) for v in x.ravel()))
    if isinstance(x, dict):
        return any(_has_nan(v, depth + 1) for v in x.values())
    if isinstance(x, (list, tuple)):
        return any(_has_nan(v, depth + 1) for v in x)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return any(_has_nan(getattr(x, f.name), depth + 1) for f in dataclasses.fields(x))
    return False


def _names(message: str, name: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message) is not None


def outcome(fn, bound: inspect.BoundArguments, name: str, kind: str) -> tuple[str, str]:
    """Call ``fn`` with ``bound`` and classify what happened; returns (outcome, detail)."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CALL_LIMIT_S)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = fn(*bound.args, **bound.kwargs)
    except _Timeout:
        return HANG, f"ran past {CALL_LIMIT_S} s"
    except ValueError as err:
        if _names(str(err), name):
            return CLEAR, str(err)
        if kind == MAYBE_VALID:  # a value valid alone, refused in combination with the others
            return COMBINATION, str(err)
        return UNCLEAR, f"ValueError: {err}"
    except Exception as err:  # noqa: BLE001 - any other exception is the defect we look for
        return CRASH, f"{type(err).__name__}: {err}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    if kind == NEVER_VALID:
        return SILENT, f"returned {_short(result)}"
    if _has_nan(result):
        return SILENT, f"returned NaN: {_short(result)}"
    return OK, ""


def _short(x) -> str:
    s = repr(x)
    return s if len(s) < 80 else s[:77] + "..."


def bad_calls(qual):
    """(argument name, bad value, kind, bound arguments) for every bad call of ``qual``."""
    fn = FUNCTIONS[qual]
    args, kwargs = CALLS[qual]
    sig = inspect.signature(fn)
    base = sig.bind(*args, **kwargs)
    full = sig.bind(*args, **kwargs)
    full.apply_defaults()
    for pname, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        example = full.arguments[pname]
        others = [v for k, v in full.arguments.items() if k != pname]
        none_valid = param.default is None or "None" in str(param.annotation)
        for value, kind in bad_values(qual, pname, example, others, none_valid):
            b = sig.bind(*base.args, **base.kwargs)
            b.arguments[pname] = value
            yield pname, value, kind, b


@functools.lru_cache(maxsize=1)
def _limit_memory():
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * resource.getpagesize()
    cap = used + MEMORY_HEADROOM_BYTES
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    return soft, hard, cap


class _MemoryCap:
    """Cap the address space while bad calls run, so a huge allocation fails fast."""

    def __enter__(self):
        self.soft, self.hard, cap = _limit_memory()
        resource.setrlimit(resource.RLIMIT_AS, (cap, self.hard))

    def __exit__(self, *exc):
        resource.setrlimit(resource.RLIMIT_AS, (self.soft, self.hard))


def survey(quals=None):
    """Every bad call of every function in ``quals``: list of (qual, arg, value, outcome, detail)."""
    rows = []
    with _MemoryCap():
        for qual in quals or sorted(CALLS):
            if qual in EXEMPT:
                continue
            for pname, value, kind, b in bad_calls(qual):
                res, detail = outcome(FUNCTIONS[qual], b, pname, kind)
                rows.append((qual, pname, value, res, detail))
    return rows


def _report(rows):
    return "\n".join(f"{q}({a}={_short(v)}): {res}: {d}" for q, a, v, res, d in rows
                     if res not in ACCEPTABLE)


# --- the tests ----------------------------------------------------------------------------

def test_every_public_function_has_a_valid_example():
    missing = sorted(set(FUNCTIONS) - set(CALLS) - set(EXEMPT))
    assert not missing, ("public model functions with no valid example (add a doctest that "
                         f"calls them, or an entry in EXAMPLES): {missing}")


def test_exemptions_are_real_functions():
    assert set(EXEMPT) <= set(FUNCTIONS)
    assert UNPAIRED <= set(FUNCTIONS)
    for qual, name in FREE_TEXT | NAN_VALID:
        assert name in inspect.signature(FUNCTIONS[qual]).parameters, (qual, name)


def test_the_fuzz_catches_a_silent_wrong_result():
    """The harness itself: a function that treats NaN as 1 is caught, a clear one passes."""
    def sloppy(scale: float) -> float:
        return scale if scale == scale else 1.0

    def careful(scale: float) -> float:
        if not (isinstance(scale, (int, float)) and not isinstance(scale, bool)
                and math.isfinite(scale) and scale > 0):
            raise ValueError(f"scale must be a finite number in (0, inf), got {scale!r}")
        return scale

    for fn, expected in ((sloppy, SILENT), (careful, CLEAR)):
        b = inspect.signature(fn).bind(math.nan)
        assert outcome(fn, b, "scale", NEVER_VALID)[0] == expected


def test_the_fuzz_catches_a_hang():
    def spin(n: int) -> int:
        while True:
            pass

    b = inspect.signature(spin).bind(10**9)
    assert outcome(spin, b, "n", MAYBE_VALID)[0] == HANG


@pytest.mark.parametrize("module", [m.__name__.rsplit(".", 1)[1] for m in MODULES])
def test_fixed_bad_values_are_refused(module):
    quals = [q for q in sorted(CALLS) if q.startswith(module + ".")]
    rows = survey(quals)
    bad = _report(rows)
    assert not bad, f"{len(bad.splitlines())} bad calls handled badly:\n{bad}"


numbers = st.one_of(
    st.floats(allow_nan=False),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.sampled_from([0, -1, 2**63, -(2**63), 2**64 + 1, 1e308, -1e308, 5e-324]),
)
QUALS = sorted(q for q in CALLS if q not in EXEMPT)


@settings(max_examples=300)
@given(data=st.data())
def test_random_numbers_never_crash_or_hang(data):
    """A random number in place of any numeric argument: a clear ValueError or a NaN-free result."""
    qual = data.draw(st.sampled_from(QUALS), label="function")
    fn = FUNCTIONS[qual]
    args, kwargs = CALLS[qual]
    sig = inspect.signature(fn)
    full = sig.bind(*args, **kwargs)
    full.apply_defaults()
    numeric = [k for k, v in full.arguments.items() if _is_number(v)]
    if not numeric:
        return
    pname = data.draw(st.sampled_from(numeric), label="argument")
    value = data.draw(numbers, label="value")
    b = sig.bind(*args, **kwargs)
    b.arguments[pname] = value
    with _MemoryCap():
        res, detail = outcome(fn, b, pname, MAYBE_VALID)
    assert res in ACCEPTABLE, f"{qual}({pname}={value!r}): {res}: {detail}"


if __name__ == "__main__":  # the survey: python tests/models/test_bad_input.py [-v]
    rows = survey()
    print(f"functions: {len(FUNCTIONS)} public, {len(CALLS)} with a valid example, "
          f"{len(set(FUNCTIONS) - set(CALLS) - set(EXEMPT))} without, {len(EXEMPT)} exempt")
    print(f"functions fuzzed: {len({r[0] for r in rows})}; bad calls made: {len(rows)}")
    counts = Counter(r[3] for r in rows)
    for res in (CLEAR, COMBINATION, OK, UNCLEAR, CRASH, HANG, SILENT):
        print(f"  {res}: {counts[res]}  ({len({r[0] for r in rows if r[3] == res})} functions)")
    if "-v" in sys.argv:
        print(_report(rows))
