"""What each lab's page computes from a result: one module per lab, beside its runner.

A runner (``helpers.labs.<lab>``) measures and writes a result file; it holds the lab's
:class:`~helpers.labs.core.Lab` record (with its claims), its ``measure_*`` functions, its
grader and its command line. ``helpers.labs.analysis.<lab>`` reads a result (the shipped H200
reference, or the reader's own run) and gives the page its rows (``comparison_rows``, each
naming one of the lab's claims), its tables and the numbers its prose glues. Analysis modules
import their runner, never the other way round, and models live in :mod:`helpers.models`.
"""
