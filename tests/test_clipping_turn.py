"""The scaled path's clipping check (`preprocessing.release_clipping_turn`): neighbours publish the same contract, bad
input is refused by name, the caller's arrays are kept, and the budget is checked before the rows are read."""
import math

import numpy as np
import pytest

from dppca_nb.preprocessing import (clipping_turn_contract, clipping_turn_statistic, release_clipping_turn, turn_bias,
                                    with_clipping_turn)
from dppca_nb.privacy.accounting import PrivacyAccountant, BudgetExceededError

P, K, N, R, R2 = 8, 2, 300, 2.0, 4.0
V = np.eye(P)[:, :K]
EV, REST = np.array([3.0, 2.0]), 0.5


def _rows(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_t(3, size=(N, P))


def _release(Z, seed=0, **kw):
    return release_clipping_turn(Z, V, EV, REST, radius=R, outer_radius=R2, epsilon=kw.pop("epsilon", 1.0), cap=2.0,
                                 accountant=kw.pop("accountant", PrivacyAccountant()), random_state=seed, **kw)


@pytest.mark.parametrize("kind", ["inside", "far outside", "along the (k+1)-th axis"])
def test_neighbours_publish_the_same_contract(kind):
    X = _rows()
    Y = X.copy()
    Y[0] = {"inside": np.full(P, 0.1), "far outside": np.full(P, 50.0), "along the (k+1)-th axis": 9.0 * np.eye(P)[K]}[kind]
    a, b = _release(X), _release(Y)
    assert a.contract == b.contract and a.contract.statement() == b.contract.statement()
    # what moves is the noisy value only: by at most the sensitivity before the (same-seed) noise
    assert abs(clipping_turn_statistic(X, V, EV, REST, R, R2) - clipping_turn_statistic(Y, V, EV, REST, R, R2)) <= a.contract.sensitivity * (1 + 1e-12)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="outer_radius"):
        clipping_turn_contract(N, P, K, 1.0, radius=R, outer_radius=R, ev=EV, rest=REST)
    with pytest.raises(ValueError, match="epsilon"):
        clipping_turn_contract(N, P, K, 0.0, radius=R, outer_radius=R2, ev=EV, rest=REST)


def test_keeps_the_callers_arrays_and_is_zero_without_long_rows():
    Z = _rows()
    Z0, V0 = Z.copy(), V.copy()
    _release(Z)
    np.testing.assert_array_equal(Z, Z0); np.testing.assert_array_equal(V, V0)
    short = Z / np.linalg.norm(Z, axis=1, keepdims=True) * (0.9 * R)        # no row beyond R: nothing turned
    assert clipping_turn_statistic(short, V, EV, REST, R, R2) == 0.0


def test_budget_checked_before_the_rows():
    acc = PrivacyAccountant(0.5, 1e-5)
    with pytest.raises(BudgetExceededError):
        _release(_rows(), accountant=acc)
    assert acc.ledger == []


def test_post_processing():
    assert turn_bias(0.0, K, 2.0) == 0.0 and turn_bias(-1.0, K, 2.0) == 0.0 and turn_bias(math.inf, K, 2.0) == 2.0
    assert math.isclose(turn_bias(1e-6, K, 2.0), math.sqrt(2) * 1e-6)        # first order: sqrt(2) t
    assert turn_bias(1e9, K, 5.0) == pytest.approx(math.sqrt(2 * K))          # k right angles: the largest distance
    t = _release(_rows())
    e, (lo, hi) = with_clipping_turn(0.3, (0.1, 0.6), t, 2.0)
    assert e == min(0.3 + t.bias, 2.0) and lo <= e <= hi <= 2.0
