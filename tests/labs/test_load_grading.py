"""Grading the load lab with nbval: the M/M/1 formula fails, Erlang C passes."""

MARKER = "# Exercise: Erlang C"
NOTEBOOK = "labs/load.ipynb"

MM1 = '''# Exercise: Erlang C
def my_erlang_c(servers, offered_load):
    return offered_load / servers  # the utilization: what one server would give
'''

RIGHT = '''# Exercise: Erlang C
import math

def my_erlang_c(servers, offered_load):
    c, a = int(servers), float(offered_load)
    log_top = c * math.log(a) - math.lgamma(c + 1) + math.log(c / (c - a)) if a > 0 else -math.inf
    terms = [k * math.log(a) - math.lgamma(k + 1) if a > 0 else (0.0 if k == 0 else -math.inf)
             for k in range(c)]
    m = max(terms + [log_top])
    top = math.exp(log_top - m)
    return top / (sum(math.exp(t - m) for t in terms) + top)
'''


def test_the_mm1_formula_fails_with_a_readable_message(grade):
    passed, output = grade(NOTEBOOK, {MARKER: MM1})
    assert not passed, output[-3000:]
    assert "FAIL Erlang C" in output and "the M/M/1 answer" in output, output[-3000:]


def test_a_correct_erlang_c_passes(grade):
    passed, output = grade(NOTEBOOK, {MARKER: RIGHT})
    assert passed, output[-3000:]
