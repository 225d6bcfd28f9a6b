"""Environment shared by the tests and the kernels that nbval starts (they inherit it).

tools/nb_refs.py sets the same variables when it makes the reference notebooks, so a page
runs in the same environment when its reference is made and when nbval compares against it.
"""

import os

os.environ["PYTHONHASHSEED"] = "0"  # stable ordering of sets and str-keyed dicts
os.environ["OMP_NUM_THREADS"] = "1"  # same reduction order as the reference run
os.environ.setdefault("BOOK_SIZE", "small")  # the one size switch: small problems in tests
os.environ.pop("MPLBACKEND", None)  # Agg would drop inline figures from executed pages

try:  # hypothesis: the same examples on every run, and no per-example deadline on a busy CI machine
    from hypothesis import settings

    settings.register_profile("book", deadline=None, derandomize=True, print_blob=True)
    settings.load_profile("book")
except ImportError:  # the GPU machine may lack hypothesis; its tests that need it skip there
    pass
