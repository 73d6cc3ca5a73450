"""The private scorer: its noise is the contract's (snapping Laplace at scale R^2 / (m epsilon), on the contract's
grid), its statistic moves by at most the sensitivity R^2 / m between held-out folds that differ in one row of any
magnitude (1e300, subnormal), neighbouring folds publish the same contract and ledger entry, and a grid search spends
every fit and every score on one ledger whose total `search_privacy` states.
"""
import math
import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

from dppca_nb.core.validation import PrivacyWarning
from dppca_nb.estimators import AnalyzeGaussPCA
from dppca_nb.model_selection import (PrivateScorer, _score_bound, captured_variance, score_contract,
                                      search_privacy)
from dppca_nb.privacy.accounting import BudgetExceededError, PrivacyAccountant
from dppca_nb.privacy.mechanisms import snapping_epsilon, snapping_laplace, snapping_scale

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")     # the fits' UtilityWarnings: not under test here

rng = np.random.default_rng(0)
X = rng.normal(size=(1200, 5)) * np.sqrt([0.3, 0.1, 0.05, 0.05, 0.05]) / 2
TRAIN, TEST = X[:1000], X[1000:]
FIT = AnalyzeGaussPCA(2, epsilon=2.0, radius=1.0).fit(TRAIN)          # random_state=None: as in a search
R, EPS, M = 1.0, 0.2, len(TEST)


def _scorer(**kw):
    return PrivateScorer(EPS, R, accountant=kw.pop("accountant", PrivacyAccountant(None)), **kw)


def test_contract_states_the_noise_it_draws():
    c = score_contract(M, 5, EPS, R)
    B = _score_bound(c)
    assert c.sensitivity == R ** 2 / M and c.measure == "pure" and c.delta == 0 and c.n == M
    assert c.noise_scale == snapping_scale(EPS, R ** 2 / M, B) and c.noise_scale == pytest.approx(R ** 2 / (M * EPS), rel=1e-6)
    assert snapping_epsilon(c.noise_scale, c.sensitivity, B) <= EPS and c.epsilon_certified <= EPS
    assert B >= R ** 2 + 19 * c.noise_scale                   # the statistic (in [0, R^2]) is never clamped
    s = captured_variance(TEST, FIT.components_, FIT.mean_, R)
    for seed in range(5):                                      # exactly the snapping mechanism at the contract's scale
        assert _scorer(random_state=seed)(FIT, TEST) == snapping_laplace(s, c.noise_scale, B, np.random.default_rng(seed))


def test_noise_scale_measured():
    "E|Laplace(lambda)| = lambda, sd lambda: the mean of 2000 within 5 lambda / sqrt(2000), plus the rounding to the grid."
    sc = _scorer(random_state=3)
    s = captured_variance(TEST, FIT.components_, FIT.mean_, R)
    draws = np.array([sc(FIT, TEST) for _ in range(2000)])
    lam, grid = sc.contract_.noise_scale, sc.contract_.grid
    assert abs(np.mean(np.abs(draws - s)) - lam) <= grid / 2 + 5 * lam / math.sqrt(2000)
    assert np.all(np.rint(draws / grid) * grid == draws)      # every score on the public lattice
    assert len(sc.accountant.ledger) == 2000 and len(set(draws)) > 10     # fresh noise each call


@pytest.mark.parametrize("value", [1e300, -1e300, 5e-324, 1e-300, 3.0])
def test_neighbouring_folds(value):
    "One held-out row replaced by an extreme one: the statistic moves by at most R^2/m; contract and ledger agree."
    other = TEST.copy()
    other[17] = [value, -value, 0, value, 0]
    a = captured_variance(TEST, FIT.components_, FIT.mean_, R)
    b = captured_variance(other, FIT.components_, FIT.mean_, R)
    assert np.isfinite(b) and abs(a - b) <= R ** 2 / M * (1 + 1e-12)
    la, lb = PrivacyAccountant(None), PrivacyAccountant(None)
    sa, sb = _scorer(accountant=la, random_state=0), _scorer(accountant=lb, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                        # no warning on either: none that tells them apart
        sa(FIT, TEST); sb(FIT, other)
    assert sa.contract_ == sb.contract_ and la.ledger == lb.ledger


def test_sensitivity_is_attained():
    V, mu = FIT.components_, FIT.mean_
    orth = np.linalg.svd(np.vstack([V, np.eye(5)]))[2][-1]
    along, across = TEST.copy(), TEST.copy()
    along[0], across[0] = mu + 5 * V[0], mu + 5 * orth
    assert captured_variance(along, V, mu, R) - captured_variance(across, V, mu, R) == pytest.approx(R ** 2 / M, rel=1e-9)


def test_ledger_budget_and_failure():
    acc = PrivacyAccountant(0.5)
    sc = _scorer(accountant=acc)
    sc(FIT, TEST); sc(FIT, TEST)
    with pytest.raises(BudgetExceededError, match="no data were read"): sc(FIT, TEST)
    assert [(s.label, s.epsilon, s.kind) for s in acc.ledger] == [("PrivateScorer.score", EPS, "pure")] * 2
    bad = TEST.copy()
    bad[2, 2] = np.inf
    led = PrivacyAccountant(None)
    with pytest.raises(ValueError, match="not finite"): _scorer(accountant=led)(FIT, bad)
    assert [s.label for s in led.ledger] == ["PrivateScorer.score (failed)"]       # the rows were read: charged
    with pytest.warns(PrivacyWarning, match="fixed random_state"):
        _scorer()(AnalyzeGaussPCA(2, radius=1.0, random_state=0).fit(TRAIN), TEST)


def test_a_grid_search_is_private_end_to_end():
    with PrivacyAccountant(5.0, 1e-5) as led:
        gs = GridSearchCV(AnalyzeGaussPCA(2, epsilon=0.5, radius=1.0, centering="none"), {"noise_shape": ["vecd", "upper"]},
                          scoring=PrivateScorer(EPS, R), cv=KFold(3)).fit(X)
    st = search_privacy(led, gs)
    # 7 fits of 2 entries (the clipped share at the public bound, a noisy count; the components) and 6 scores
    assert (st["fits"], st["scores"], st["failed"], st["entries"]) == (7, 6, 0, 20)
    assert st["epsilon"] == led.spent() <= 5.0 and st["delta"] == 1e-5
    assert st["guarantee"] == f"({led.spent():.4g}, 1e-05)-DP" and st["epsilon"] > gs.best_estimator_.privacy_["epsilon"]
    assert np.isfinite(gs.cv_results_["mean_test_score"]).all()
    with PrivacyAccountant(None, 1e-5) as led2:
        with pytest.warns(UserWarning):
            gs2 = GridSearchCV(AnalyzeGaussPCA(2, radius=1.0, random_state=0), {"noise_shape": ["vecd"]}, cv=2).fit(X)
    st2 = search_privacy(led2, gs2)
    assert st2["epsilon"] is None and "exact" in st2["guarantee"] and "random_state" in st2["guarantee"]
    with PrivacyAccountant(None, 1e-5) as led3:
        scores = cross_val_score(AnalyzeGaussPCA(2, radius=1.0), X, scoring=PrivateScorer(EPS, R), cv=KFold(4))
    assert len(scores) == 4 and (search_privacy(led3)["fits"], search_privacy(led3)["scores"]) == (4, 4)
