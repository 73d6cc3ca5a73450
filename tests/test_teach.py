"""The teaching layer (dppca_nb.teach): bad input to the explorers' functions is refused with an error naming the
argument, and the explorers' registry is derived, never kept by hand. The figures themselves are tested in their
notebooks (nbs/08_teach)."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("matplotlib")
pytest.importorskip("ipywidgets")


@pytest.mark.parametrize("call, message", [
    ("local.bounds_figure(p=10, k=10)", "k: expected"),
    ("local.bounds_figure(p=10, k=3, s=2)", "s: expected"),
    ("sparse_cov.threshold_snapshot(s=40)", "s: expected an integer between 0 and p - 1"),
    ("sparse_cov.threshold_snapshot(structure='diag')", "structure: expected one of"),
    ("sparse_cov.threshold_snapshot(epsilon=0)", "epsilon"),
    ("sparse_cov.threshold_snapshot(n=1)", "n: expected an integer >= 2"),
    ("smooth.smooth_sensitivity_figure(gap=-0.1)", "gap"),
    ("smooth.smooth_sensitivity_figure(delta=1.5)", "delta"),
    ("robust.robustness_errors(fraction=0.6)", "fraction"),
    ("robust.robustness_errors(df=0)", "df"),
    ("robust.robustness_figure(random_state=None)", "random_state: expected an int seed"),
    ("widgets.voila_argv('app', 0)", "port: expected an integer in 1..65535"),
    ("widgets.voila_argv('app', '8866')", "port: expected"),
    ("widgets.voila_argv('app', cull_idle_timeout=0)", "cull_idle_timeout: expected an integer number of seconds >= 1"),
    ("widgets.voila_argv('app', cull_interval=2.5)", "cull_interval: expected"),
    ("widgets.explorer('nope')", "name: expected one of"),
    ("widgets.probe_explorer('nope')", "name: expected one of"),
])
def test_bad_input(call, message):
    from dppca_nb.teach import local, sparse_cov, smooth, robust, widgets     # noqa: F401 (used by eval)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        eval(call)


def test_release_errors_bad_frame():
    import numpy as np
    from dppca_nb.teach.smooth import release_errors
    X = np.random.default_rng(0).normal(size=(50, 4)) / 4
    V = np.eye(4)[:, :2]
    with pytest.raises(ValueError, match="U: expected the p x k"):
        release_errors(X, V, 2, 1.0, 1e-5, 1, 0, U=V[:, :1])


def test_register_explorer():
    "A name taken by another module is refused; the same module (a notebook rerun) replaces its entry."
    from dppca_nb.teach import widgets
    table = widgets.explorers()
    e = table["bounds"]
    with pytest.raises(TypeError, match="e: expected an Explorer"):
        widgets.register_explorer("bounds")
    f = lambda: None                                   # noqa: E731
    f.__module__ = "dppca_nb.teach.other"
    with pytest.raises(ValueError, match="'bounds' is registered already"):
        widgets.register_explorer(widgets.Explorer("bounds", "?", "notice", e.notebook, f, f))
    assert widgets.register_explorer(e) is e and widgets.explorers()["bounds"] is e


def test_probe_explorer_bad_slider():
    import ipywidgets as W
    import matplotlib.pyplot as plt
    from dppca_nb.teach import widgets

    def dead():
        out = W.Output()
        with out: plt.subplots()
        return W.VBox([W.HTML("<b>?</b>"), W.FloatSlider(1.0, min=0, max=2), out])
    widgets.register_explorer(widgets.Explorer("_dead", "?", "notice", "08_teach/04_widgets.ipynb", dead, dead))
    try:
        with pytest.raises(ValueError, match="slider: expected 0..0"):
            widgets.probe_explorer("_dead", slider=3)
    finally:
        del widgets._EXPLORERS["_dead"]
        plt.close("all")


def test_explorers_are_discovered_not_listed():
    """Every explorer is registered by its own module; the widgets module names none of them (no hand-kept list)."""
    from dppca_nb.teach.widgets import explorers
    table = explorers()
    assert len(table) >= 5
    for name, e in table.items():
        assert e.explorer.__module__ == e.figure.__module__ != "dppca_nb.teach.widgets", name
    src = (ROOT / "dppca_nb" / "teach" / "widgets.py").read_text(encoding="utf-8")
    named = {n.value for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert not named & set(table), f"dppca_nb/teach/widgets.py names explorers: {sorted(named & set(table))}"
    assert "EXPLORERS" not in src.replace("_EXPLORERS", "")
