"""The price-of-privacy view of every mechanism explorer (nbs/08_teach): it draws the curves of dppca_nb.theory.price
for the explorer's own algorithm at its settings (the same numbers, recomputed here by `price_of_privacy`), and the
explorer's toggle switches its figure to that view."""
import numpy as np
import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("ipywidgets")

# the algorithm each mechanism explorer is about (its first figure's subject)
MECHANISMS = {"bounds": "local_gaussian_pca", "local_sparse": "local_sparse_pca",
              "threshold": "dp_threshold_covariance", "smooth_sensitivity": "smooth_sensitivity_pca", "robustness": "g_dppca"}


@pytest.mark.parametrize("name, method", MECHANISMS.items())
def test_price_view_draws_theory_price_curves(name, method):
    import matplotlib.pyplot as plt
    from dppca_nb.teach.widgets import explorers
    from dppca_nb.theory.price import price_of_privacy, price_of_privacy_covariance
    fig = explorers()[name].price()
    try:
        c = fig.curves
        assert c["method"] == method
        price = price_of_privacy_covariance if "Sigma" in c["call"] else price_of_privacy
        fresh = price(**c["call"])                             # the same call, uncached: the same numbers, seed for seed
        for key in ("n_epsilon", "n", "epsilon", "mean", "se", "lower", "upper", "class_lower", "floor"):
            np.testing.assert_array_equal(c[key], fresh[key], err_msg=f"{name}: {key}")
        lines = {ln.get_label(): ln.get_ydata() for ln in fig.axes[0].get_lines()}
        cls = c.get("class_label", f"minimax ({c['privacy_class']}): no such algorithm does better")
        np.testing.assert_array_equal(lines[cls], c["class_lower"])
        np.testing.assert_array_equal(lines["non-private floor: no estimator does better"], c["floor"])
        assert fig.verdict.startswith("Privacy costs") and method in fig.verdict
        assert fig.axes[0].get_xlabel().startswith("n * epsilon") and fig.axes[0].get_ylabel()
    finally:
        plt.close(fig)


@pytest.mark.parametrize("name", MECHANISMS)
def test_the_toggle_shows_the_price_view(name):
    import ipywidgets as W
    import matplotlib.pyplot as plt
    from IPython.utils.capture import capture_output
    from dppca_nb.teach.local import verdict_html
    from dppca_nb.teach.widgets import explorers, _widget_tree
    e = explorers()[name]
    with capture_output(display=True):
        ui = e.build()
        toggle = next(w for w in _widget_tree(ui) if isinstance(w, W.ToggleButtons))
        here = next(w for w in _widget_tree(ui) if isinstance(w, W.HTML) and w.value.startswith("<p><b>At this setting"))
        before = here.value
        toggle.value = "price"
    try:
        assert here.value == verdict_html(e.price()) != before     # the sentence is the price figure's, at the defaults
    finally:
        plt.close("all")
