import pytest

from helpers.figures import lab_quantization as fig


def test_opening_animation_int8_row_is_half_as_long_and_arrives_in_half_the_time():
    f = fig.opening_animation(8)
    assert f.animated and f.svg == fig.opening_animation(8).svg  # deterministic
    assert 'keyTimes="0;1;1"' in f.svg  # the bf16 row needs the whole period
    assert 'keyTimes="0;0.56;1"' in f.svg  # the int8 row (+ scale) about half of it
    with pytest.raises(ValueError):
        fig.opening_animation(1)


def test_structure_diagram_names_the_three_measurements():
    svg = fig.structure_diagram().svg
    for word in ("error", "memory", "speed", "sqrt(12)", "copy bandwidth"):
        assert word in svg


def test_error_figure_draws_measured_and_model_per_scheme():
    rows = [{"scheme": s, "layer": l, "rms_error": e, "rms_model": e, "weight_rms": 1.0}
            for s, e in (("int8-tensor", 0.02), ("int8-channel", 0.01)) for l in ("a", "b")]
    f = fig.error_figure(rows, title="t")
    assert len(f.axes[0].lines) == 4
    assert list(f.axes[0].lines[2].get_ydata()) == [0.01, 0.01]
    with pytest.raises(ValueError):
        fig.error_figure([], title="t")


def test_speed_figure_skips_unmeasured_paths():
    rows = [{"m": m, "dense_s": 2e-5, "dense_bound_s": 1e-5, "naive_s": 4e-5,
             "naive_bound_s": 3e-5, "int8_s": None, "int8_bound_s": 5e-6} for m in (1, 4)]
    f = fig.speed_figure(rows, title="t")
    assert len(f.axes[0].lines) == 4  # dense and naive, each with its bound
    assert list(f.axes[0].lines[0].get_ydata()) == pytest.approx([20.0, 20.0])
    with pytest.raises(ValueError):
        fig.speed_figure([], title="t")
