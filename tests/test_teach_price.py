"""The price-of-privacy view of every mechanism explorer (nbs/08_teach): it draws the curves of dppca_nb.theory.price
for the explorer's own algorithm at its settings (the same numbers, recomputed here by `price_of_privacy`), and the
explorer's toggle switches its figure to that view."""
import importlib
import inspect

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("ipywidgets")


def _with_price():
    from dppca_nb.teach.widgets import explorers
    return {name: e for name, e in explorers().items() if e.price is not None}


def _explained_in(method: str) -> str:
    "The notebook that explains a registered algorithm: its function's module's source notebook (nbdev's header)."
    from dppca_nb.algorithms.registry import get_algorithm
    src = inspect.getsource(importlib.import_module(get_algorithm(method).function.__module__))
    return src.split("File to edit: ../../nbs/", 1)[1].split(".ipynb", 1)[0] + ".ipynb"


def test_every_mechanism_explorer_has_a_price_view():
    from dppca_nb.teach.widgets import explorers
    table, priced = explorers(), _with_price()
    assert len(priced) >= 5 and set(table) - set(priced) == {"pictures"}, sorted(set(table) - set(priced))


def test_price_view_draws_theory_price_curves():
    import matplotlib.pyplot as plt
    from dppca_nb.theory.price import price_of_privacy, price_of_privacy_covariance
    for name, e in _with_price().items():
        fig = e.price()
        try:
            c = fig.curves
            assert _explained_in(c["method"]) == e.notebook, (name, c["method"])    # the algorithm the explorer is about
            price = price_of_privacy_covariance if "Sigma" in c["call"] else price_of_privacy
            fresh = price(**c["call"])                         # the same call, uncached: the same numbers, seed for seed
            for key in ("n_epsilon", "n", "epsilon", "mean", "se", "lower", "upper", "class_lower", "floor"):
                np.testing.assert_array_equal(c[key], fresh[key], err_msg=f"{name}: {key}")
            lines = {ln.get_label(): ln.get_ydata() for ln in fig.axes[0].get_lines()}
            cls = c.get("class_label", f"minimax ({c['privacy_class']}): no such algorithm does better")
            np.testing.assert_array_equal(lines[cls], c["class_lower"])
            np.testing.assert_array_equal(lines["non-private floor: no estimator does better"], c["floor"])
            assert fig.verdict.startswith("Privacy costs") and c["method"] in fig.verdict, name
            assert fig.axes[0].get_xlabel().startswith("n * epsilon") and fig.axes[0].get_ylabel(), name
        finally:
            plt.close(fig)


def test_the_toggle_shows_the_price_view():
    import ipywidgets as W
    import matplotlib.pyplot as plt
    from IPython.utils.capture import capture_output
    from dppca_nb.teach.local import verdict_html
    from dppca_nb.teach.widgets import _widget_tree
    for name, e in _with_price().items():
        with capture_output(display=True):
            ui = e.build()
            toggle = next(w for w in _widget_tree(ui) if isinstance(w, W.ToggleButtons))
            here = next(w for w in _widget_tree(ui) if isinstance(w, W.HTML) and w.value.startswith("<p><b>At this setting"))
            before = here.value
            toggle.value = "price"
        try:
            assert here.value == verdict_html(e.price()) != before, name   # the sentence is the price figure's, at the defaults
        finally:
            plt.close("all")
