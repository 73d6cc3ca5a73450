"""Bad-input checks of nbs/07_experiments/00_framework/00_study.ipynb (where each class is explained), moved out of its
reading flow: the notebook's own calls and message fragments."""
from fastcore import test as fct          # fct.test_fail: pytest would collect a bare test_fail

from dppca_nb.experiments.study import Check, get_study


def test_check_refusals():                        # the notebook shows the no_bound refusal
    fct.test_fail(lambda: Check("x", {}, bound={"n": 10}), contains="method")          # a bound names the method
    fct.test_fail(lambda: Check("x", {}, no_bound="toy", minimax={"n": 10}), contains="model")


def test_get_study_refuses_an_unknown_name():
    fct.test_fail(lambda: get_study("no_such_study"), contains="not registered")
