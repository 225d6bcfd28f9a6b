"""An instructor's view: `pytest --nbval` on the timing lab grades a right and a wrong timer apart."""

import pytest

NOTEBOOK = "labs/timing.ipynb"
MARKER = "# Exercise: timer"

WRONG = '''# Exercise: timer
def my_timer(run, synchronize):
    t0 = time.perf_counter()
    run()
    return time.perf_counter() - t0  # forgot to wait for the device
'''

RIGHT_ANOTHER_WAY = '''# Exercise: timer
def my_timer(run, synchronize):
    synchronize()
    start = time.perf_counter_ns()
    run()
    synchronize()
    return (time.perf_counter_ns() - start) * 1e-9
'''


@pytest.mark.slow
def test_a_timer_without_synchronization_fails_with_a_reason(grade):
    passed, output = grade(NOTEBOOK, {MARKER: WRONG})
    assert not passed
    assert "FAIL timer: it stopped the clock before the device finished" in output


@pytest.mark.slow
def test_a_different_correct_timer_passes(grade):
    passed, output = grade(NOTEBOOK, {MARKER: RIGHT_ANOTHER_WAY})
    assert passed, output[-3000:]
