"""Bad-input checks of nbs/05_theory/02_bounds/00_base.ipynb (where each function is explained), moved out of its
reading flow: the notebook's own calls and message fragments."""
from fastcore import test as fct          # fct.test_fail: pytest would collect a bare test_fail

import dppca_nb.theory.bounds as package
from dppca_nb.theory.bounds import _lam, plan_noise_scale


def test_lam_refusals():
    fct.test_fail(lambda: _lam([1.0, -1.0]), contains="eigenvalues"); fct.test_fail(lambda: _lam([2.0, 1.0], p=3), contains="expected 3")


def test_plan_noise_scale_refuses_an_unknown_option():
    fct.test_fail(lambda: plan_noise_scale("analyze_gauss", 1000, 10, 2, 1.0, 1e-5, constants="paper"), contains="options")


def test_the_package_has_no_such_name():
    fct.test_fail(lambda: package.no_such_name, contains="no attribute")
