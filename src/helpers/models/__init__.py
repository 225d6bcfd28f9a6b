"""The book's models: pure functions of explicit arguments in SI base units.

One module per topic; each function's docstring states its equation, units, assumptions and
source. Models import nothing heavier than numpy, so they run and test on any CPU.
Import the module you need, e.g. ``from helpers.models import roofline``.
"""
