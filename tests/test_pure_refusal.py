"""PureDPSubspace refuses at once, from public quantities only, when max_trials cannot cover its draw.

The refusal rule: max_trials >= 20 / subspace_acceptance_rate(p, k), so that data with a clear top-k subspace exhaust
max_trials with probability at most (1 - rate)^max_trials <= exp(-20). The refusal reads no row. For k >= 2 other data
can get far smaller rates (`subspace_adversarial_acceptance`): checked here on realisable rows."""
import math
import numpy as np
import pytest
from dppca_nb.algorithms.pure import (SUBSPACE_MARGIN, plan_pure_dp_subspace, pure_dp_subspace, subspace_acceptance_rate,
                                      subspace_adversarial_acceptance)
from dppca_nb.privacy.samplers import macg_limit_acceptance, matrix_bingham_acceptance_rate


class Unreadable:
    "A table with a public shape whose rows cannot be read: any attempt raises."
    shape = (10_000, 54)
    def __array__(self, *a, **k): raise AssertionError("a row was read")
    def __getitem__(self, i): raise AssertionError("a row was read")
    def __len__(self): return self.shape[0]
    def __iter__(self): raise AssertionError("a row was read")


def test_refusal_reads_no_row():
    # k = 4 at p = 54 needs 20 / 1.7e-7 = 1.2e8 proposals: refused from the shape alone (the rows would raise AssertionError)
    with pytest.raises(ValueError, match="Nothing was read"):
        pure_dp_subspace(Unreadable(), 4, 1.0)
    with pytest.raises(ValueError, match="Nothing was read"):                     # also with a smaller max_trials
        pure_dp_subspace(Unreadable(), 3, 1.0, max_trials=10 ** 5)


def test_refusal_comes_from_the_plan():
    # the plan takes (n, p, k, epsilon) only: no data exist when it refuses
    with pytest.raises(ValueError) as e:
        plan_pure_dp_subspace(10_000, 54, 3, 1.0, max_trials=10 ** 5)
    msg = str(e.value)
    rate = macg_limit_acceptance(54, 3)
    for part in ("max_trials=100000", f"{1 / rate:.3g} proposals", f"{20 / rate:.3g}", "e^-20", "pure_dp_pca",
                 "PureDPPCA", "a smaller k (k <= 2 here)", f"max_trials >= {math.ceil(20 / rate)}"):
        assert part in msg, part


@pytest.mark.parametrize("p,k", [(10, 1), (10, 2), (40, 3), (54, 3), (40, 4)])
def test_margin_is_exactly_20_over_the_rate(p, k):
    need = math.ceil(SUBSPACE_MARGIN / subspace_acceptance_rate(p, k))
    plan_pure_dp_subspace(1000, p, k, 1.0, max_trials=need)                        # admitted at the margin
    with pytest.raises(ValueError, match="max_trials"):
        plan_pure_dp_subspace(1000, p, k, 1.0, max_trials=need - 1)                 # refused just below it
    # at the margin, favourable data fail with probability (1 - rate)^need <= e^-20
    assert need * math.log1p(-subspace_acceptance_rate(p, k)) <= -20


def test_k_equal_p_is_never_refused():
    plan_pure_dp_subspace(100, 5, 5, 1.0, max_trials=1)                            # uniform: one proposal, always accepted
    assert pure_dp_subspace(np.eye(5)[[0, 1, 2, 3, 4, 0]], 5, 1.0, max_trials=1, random_state=0).shape == (5, 5)


def test_default_admits_the_small_examples():
    # p = 10, k = 2 (the estimators' examples) needs 416 proposals for the margin; p = 54, k = 3 about 5.4e5
    for p, k in ((10, 2), (4, 2), (13, 2), (30, 2), (40, 3), (54, 3)):
        plan_pure_dp_subspace(10_000, p, k, 1.0)
    assert math.ceil(20 / subspace_acceptance_rate(10, 2)) == 417


def test_adversarial_rows_realise_the_family():
    # the rows of the docstring give exactly the family's eigenvalues (0, (1 - g) L', L', ...), L' = L / (1 + g)
    n, p, eps, g = 10_000, 10, 1.0, 0.03
    n2 = round(n * g / (1 + g))
    X = np.zeros((n, p)); X[:n - n2, 0] = 1.0; X[n - n2:, 1] = 1.0
    c = np.linalg.eigvalsh(X.T @ X)[::-1]
    a = eps / 2 * (c[0] - c)
    L = eps * n / 2
    np.testing.assert_allclose(a[1:3], [(1 - g) * L / (1 + g), L / (1 + g)], rtol=1e-3)   # n2 rounded to a whole row
    # and the draw on them is far below the prediction (Monte Carlo, 4000 proposals: any rate < 1e-4 shows as < 1e-4
    # unless a proposal with acceptance probability > 0.4 occurs, itself of probability < 1e-4 * 4000 / 0.4 = 1)
    r = matrix_bingham_acceptance_rate(-eps / 2 * X.T @ X, 2, n_proposals=4000, random_state=0)
    assert r < 1e-4 and subspace_acceptance_rate(10, 2) > 0.04
    r_fam, g_fam = subspace_adversarial_acceptance(p, 2, L, gaps=(g,))
    assert g_fam == g and r_fam < 1e-4


def test_adversarial_family_spread_and_limits():
    assert subspace_adversarial_acceptance(10, 10, 100.0) == (1.0, None)
    r_small, _ = subspace_adversarial_acceptance(10, 2, 1.0)                        # little concentration: most accepted
    r_big, _ = subspace_adversarial_acceptance(10, 2, 1e4)
    assert r_small > 0.5 and r_big < 20 / 10 ** 6 < subspace_acceptance_rate(10, 2)
    with pytest.raises(ValueError, match="spread"):
        subspace_adversarial_acceptance(10, 2, 0.0)
    with pytest.raises(ValueError, match="gaps"):
        subspace_adversarial_acceptance(10, 2, 10.0, gaps=(-0.1,))
    with pytest.raises(ValueError, match="gaps"):
        subspace_adversarial_acceptance(10, 2, 10.0, gaps=(1.0,))


def test_admitted_shape_can_still_fail_on_adversarial_rows():
    # an admitted shape (p = 10, k = 2) on adversarial rows exhausts a small max_trials: the failure the rule cannot
    # see, raised by the sampler during the release (curator only; nothing released)
    X = np.zeros((10_000, 10)); X[:9709, 0] = 1.0; X[9709:, 1] = 1.0
    plan_pure_dp_subspace(10_000, 10, 2, 1.0, max_trials=2000)                     # 2000 >= 417: admitted
    with pytest.raises(RuntimeError, match="max_trials: 2000 proposals gave 0"):
        pure_dp_subspace(X, 2, 1.0, max_trials=2000, random_state=0)
