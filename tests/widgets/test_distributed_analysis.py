import ipywidgets as widgets
import matplotlib.pyplot as plt
import pytest

from helpers import specs
from helpers.models import distributed_analysis as da
from helpers.widgets import distributed_analysis as wd


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_marked_point_is_the_model_and_halving_mfu_doubles_the_time():
    fig = wd.draw_time_to_train(70e9, 2e12, 1024, 0.4)
    x, y = fig.axes[0].lines[1].get_data()
    expect = da.time_to_train_s(n_params=70e9, n_tokens=2e12, n_devices=1024,
                                peak_flop_per_s=specs.H200_SXM.peak_flop_per_s("bf16"),
                                mfu=0.4) / wd.DAY_S
    assert x[0] == pytest.approx(40) and y[0] == pytest.approx(expect)
    slow = wd.draw_time_to_train(70e9, 2e12, 1024, 0.2).axes[0].lines[1].get_data()[1][0]
    assert slow == pytest.approx(2 * expect)


def test_explorer_builds_with_four_controls():
    box = wd.time_to_train_explorer()
    assert isinstance(box, widgets.VBox)
    controls = box.children[1].children
    assert len(controls) == 4


def test_bad_mfu_raises():
    with pytest.raises(ValueError):
        wd.draw_time_to_train(70e9, 2e12, 1024, 0.0)
