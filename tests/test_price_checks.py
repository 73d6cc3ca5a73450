"""Bad-input checks of nbs/05_theory/04_price.ipynb (where each function is explained), moved out of its reading flow:
the notebook's own calls and message fragments."""
import numpy as np
from fastcore import test as fct          # fct.test_fail: pytest would collect a bare test_fail

from dppca_nb.theory.price import _price_points, price_of_privacy


def test_price_points_refusals():
    fct.test_fail(lambda: _price_points([10.0], 1000, 0.3), contains="exactly one")
    fct.test_fail(lambda: _price_points([0.0], 1000, None), contains="n_epsilon")


def test_price_of_privacy_refuses_a_method_without_a_class_bound():
    lam10 = np.array([0.25] * 2 + [0.0625] * 8)
    fct.test_fail(lambda: price_of_privacy("dp_threshold_covariance", 10, 2, lam10, [5.0], n=100), contains="method")


def test_price_of_privacy_covariance_refusals():
    from dppca_nb.theory.price import price_of_privacy_covariance
    S = np.diag([0.1] * 4)
    fct.test_fail(lambda: price_of_privacy_covariance("analyze_gauss", S, 1, [5.0], n=100), contains="covariance")
    fct.test_fail(lambda: price_of_privacy_covariance("dp_threshold_covariance", S[:3], 1, [5.0], n=100), contains="Sigma")
