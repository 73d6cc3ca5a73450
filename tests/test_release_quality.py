"""Every release says how good it is, one ledger, scikit-learn's PCA where the release allows it, the pure-DP subspace's
refusal, a private center that converges, and defaults that fit the bundled data: one test (or a few) per item."""
import warnings

import numpy as np
import pytest

from dppca_nb.core.linalg import random_subspace_level
from dppca_nb.estimators import (ESTIMATORS, AnalyzeGaussPCA, LocalGaussianPCA, PureDPSubspace, SmoothSensitivityPCA,
                                 UtilityWarning, debiased_spectrum, expected_subspace_error, release_noise_sd)
from dppca_nb.privacy.accounting import PrivacyAccountant, default_accountant

warnings.filterwarnings("ignore", category=UserWarning)


def _spiked(n=4000, p=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * np.array([0.5, 0.3] + [0.05] * (p - 2))
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]


X8 = _spiked()


# --- 1. the expected error and the UtilityWarning, from released values and public quantities only ----------------

def test_expected_error_is_post_processing_of_the_release():
    "expected_error_ is the same function of the released eigenvalues and the public noise scale, recomputed here."
    from dppca_nb.privacy.centering import plan_centered
    est = AnalyzeGaussPCA(2, centering="none", radius=1.0, random_state=3).fit(X8)
    rel = est._plan(*X8.shape, 2).release(X8, 3)
    sd = release_noise_sd(rel.extras["main_contract"])
    spec, total, _ = debiased_spectrum(rel.extras["eigenvalues"], sd)
    from dppca_nb.privacy.mechanisms import NOISE_SHAPES
    e, iv = expected_subspace_error(spec, 2, sd / NOISE_SHAPES["vecd"].offdiag)
    assert (e, iv) == (est.expected_error_, est.expected_error_interval_)
    assert est.explained_variance_ratio_.tolist() == (spec[:2] / total).tolist()
    assert plan_centered                                                       # (the plan composed by the estimator)


def test_utility_warning_exactly_near_the_random_level():
    "A warning where the expected error reaches 0.7 of the random level (or a component is unresolved), none elsewhere."
    for eps, want in ((0.05, True), (20.0, False)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            est = AnalyzeGaussPCA(2, epsilon=eps, random_state=0).fit(X8)
        got = any(x.category is UtilityWarning for x in w)
        near = est.expected_error_ >= 0.7 * random_subspace_level(8, 2)
        assert got == want == near, (eps, est.expected_error_)
    assert issubclass(UtilityWarning, UserWarning)


def test_expected_error_is_none_with_a_reason_where_no_bound_applies():
    est = PureDPSubspace(2, order_share=0.0, random_state=0).fit(X8[:500])
    assert est.expected_error_ is None and est.expected_error_interval_ is None and "None" in est.expected_error_note_


def test_pure_expected_error_within_a_factor_two_of_the_measured():
    "The exponential mechanism's first-order error, from released variances and public exponents, within 2x (4 seeds)."
    from dppca_nb.core.linalg import subspace_distance, top_k_eigvecs
    from dppca_nb.estimators import PureDPPCA
    X = np.random.default_rng(0).normal(size=(10_000, 10)) * np.array([0.5, 0.35] + [0.1] * 8)
    for cls in (PureDPPCA, PureDPSubspace):
        fits = [cls(2, epsilon=1.0, random_state=s).fit(X) for s in range(4)]
        meas = []
        for f in fits:
            Y = X - f.mean_
            Y = Y * np.minimum(1, f.radius_ / np.linalg.norm(Y, axis=1))[:, None]
            meas.append(subspace_distance(f.components_.T, top_k_eigvecs(Y.T @ Y, 2)))
        pairs = [(m, f.expected_error_) for m, f in zip(meas, fits) if f.expected_error_ is not None]
        assert len(pairs) >= 3, [f.expected_error_note_ for f in fits]     # (the ordering step's noise may hide a gap)
        m, e = np.mean(pairs, axis=0)
        assert 0.5 < e / m < 2 and fits[0].expected_error_interval_ is None, (cls.__name__, e, m)


def _utility_messages(fit):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        est = fit()
    return est, [str(x.message) for x in w if x.category is UtilityWarning]


def test_utility_warning_names_unresolved_components():
    "Two strong directions in p = 8: a third component is one the noise chose, and the warning says keep 2."
    # at the public bound 2 (rows of norm below 1, centered: the noise of a bound 4 times the norms) the six weak
    # directions lie below the noise; at the default private radius (the median norm) they stand above it
    est, msgs = _utility_messages(lambda: AnalyzeGaussPCA(3, epsilon=5.0, radius=2.0, random_state=0).fit(X8))
    assert est.n_components_ == 3 and any("n_components=2" in m for m in msgs), msgs
    est, msgs = _utility_messages(lambda: AnalyzeGaussPCA(2, epsilon=5.0, radius=2.0, random_state=0).fit(X8))
    assert msgs == []                                                      # both resolved, far from the random level


def test_utility_warning_radius_at_the_end_of_its_public_range():
    "Norms uniform on [0.5, 1.5] (median 1): a public range up to 0.9 releases its upper end; up to 10 it does not."
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 6))
    X *= (rng.uniform(0.5, 1.5, 4000) / np.linalg.norm(X, axis=1))[:, None]
    kw = dict(radius="private", centering="none", random_state=0)
    est, msgs = _utility_messages(lambda: AnalyzeGaussPCA(2, radius_bounds=(0.01, 0.9), **kw).fit(X))
    assert est.radius_ == pytest.approx(0.9) and any("upper end of its public range" in m for m in msgs), msgs   # factor 1
    est, msgs = _utility_messages(lambda: AnalyzeGaussPCA(2, radius_bounds=(0.01, 10.0), **kw).fit(X))
    assert not any("public range" in m for m in msgs), msgs


def test_utility_warning_for_a_zero_covariance():
    "DP-Thresholding on 150 rows: every entry falls below the threshold, the released covariance is 0, and it says so."
    from dppca_nb.estimators import DPThresholdCovariance
    X = np.random.default_rng(0).normal(size=(150, 4)) / 4
    est, msgs = _utility_messages(lambda: DPThresholdCovariance(random_state=0).fit(X))
    assert not np.any(est.covariance_) and any("released covariance is 0" in m for m in msgs), msgs
    big = _spiked(20_000, 4) * 0.5
    est, msgs = _utility_messages(lambda: DPThresholdCovariance(epsilon=5.0, random_state=0).fit(big))
    assert np.any(est.covariance_) and not any("covariance is 0" in m for m in msgs), msgs


# --- 2. variance ratios in [0, 1], summing to at most 1; the ordering step -----------------------------------------

@pytest.mark.parametrize("name", [n for n in ESTIMATORS if n != "DPThresholdCovariance"])
def test_variance_ratio_is_a_share(name):
    kw = dict(max_iter=30) if name == "LocalSparsePCA" else {}
    est = ESTIMATORS[name](2, random_state=0, **kw).fit(X8[:1500])
    if hasattr(est, "explained_variance_ratio_"):
        r = est.explained_variance_ratio_
        assert np.all((r >= 0) & (r <= 1)) and r.sum() <= 1 + 1e-12, r


def test_covtype_local_ratio_is_no_longer_above_one():
    from dppca_nb.data.datasets import load_covtype
    est = LocalGaussianPCA(3, random_state=0).fit(load_covtype(source="sample"))
    assert est.explained_variance_ratio_.sum() <= 1 and np.all(est.explained_variance_ratio_ <= 1)


def test_order_share_orders_or_not():
    a = SmoothSensitivityPCA(2, random_state=0).fit(X8)
    b = SmoothSensitivityPCA(2, order_share=0.0, random_state=0).fit(X8)
    assert a.components_ordered_ and not b.components_ordered_ and not hasattr(b, "explained_variance_")
    assert "order" in dict(a.contract_.parts) and a.privacy_["epsilon_spent"] <= 1 + 1e-9


# --- 3. one ledger ---------------------------------------------------------------------------------------------------

def test_default_ledger_blocks_and_grid_search():
    from sklearn.model_selection import GridSearchCV
    before = len(default_accountant().ledger)
    est = AnalyzeGaussPCA(2, random_state=0).fit(X8)
    after = len(default_accountant().ledger)
    assert after == before + len(est._spends) and est.accountant_ is default_accountant()   # every part of the fit
    with PrivacyAccountant() as led:
        GridSearchCV(AnalyzeGaussPCA(2, random_state=0), {"epsilon": [0.5, 1.0]}, cv=2).fit(X8)
    assert sum(s.label.endswith(".components") for s in led.ledger) == 2 * 2 + 1     # 4 fits and the refit
    assert len(default_accountant().ledger) == after                       # the block's fits went to the block


def test_pipeline_and_its_accountant_say_one_number():
    from dppca_nb.preprocessing import PrivateStandardScaler, private_pipeline
    acc = PrivacyAccountant(None, 1e-5)
    pipe = private_pipeline(PrivateStandardScaler(epsilon=0.5, delta=1e-6, random_state=0),
                            AnalyzeGaussPCA(2, epsilon=1.0, delta=1e-6, radius=4.0, centering="none", random_state=0),
                            accountant=acc).fit(X8)
    assert pipe.privacy_["epsilon"] == pytest.approx(acc.spent(), rel=1e-12) and pipe.privacy_["delta"] == 1e-5


# --- 4. scikit-learn's PCA where the release allows it -----------------------------------------------------------------

def test_non_private_limit_agrees_with_scikit_learn():
    from sklearn.decomposition import PCA
    Xs = X8 / 4
    with pytest.warns(Warning, match="non-private limit"):
        lim = AnalyzeGaussPCA(2, epsilon=np.inf, radius=10.0).fit(Xs)
    sk = PCA(2).fit(Xs)
    assert lim.score(Xs) == pytest.approx(sk.score(Xs), rel=1e-6)     # 1/n against scikit-learn's 1/(n - 1)
    assert np.allclose(np.abs(lim.components_ @ sk.components_.T), np.eye(2), atol=1e-8)
    assert lim.contract_.guarantee.startswith("not private")
    with PrivacyAccountant(3.0, 1e-5):
        with pytest.raises(ValueError, match="Nothing was spent"): AnalyzeGaussPCA(2, epsilon=np.inf).fit(Xs)


def test_mle_whiten_covariance_and_table():
    est = AnalyzeGaussPCA("mle", epsilon=5.0, radius=2.0, random_state=0).fit(X8)
    assert 1 <= est.n_components_ <= 2                                     # two strong directions, the rest near noise
    w = AnalyzeGaussPCA(2, whiten=True, radius=2.0, random_state=0).fit(X8)  # a bound that clips no row: the variances
    assert np.allclose(np.var(w.transform(X8), axis=0), 1.0, atol=0.5)     # of the rows, so unit variance up to the noise
    assert np.allclose(np.linalg.inv(w.get_covariance()), w.get_precision())
    assert w.singular_values_.shape == (2,) and w.noise_variance_ >= 0 and w.n_samples_ == len(X8)
    pd = pytest.importorskip("pandas")
    from dppca_nb.estimators import privacy_table
    t = privacy_table(n=60, p=4)
    assert isinstance(t, pd.DataFrame) and "AnalyzeGaussPCA" in t.index
    assert privacy_table(n=60, p=4, markdown=True).startswith("| estimator |")


# --- 5. the pure-DP subspace refuses at once ------------------------------------------------------------------------

def test_pure_subspace_refuses_before_reading():
    before = len(default_accountant().ledger)
    with pytest.raises(ValueError, match="Nothing was read"):
        PureDPSubspace(20, random_state=0).fit(np.random.default_rng(0).normal(size=(500, 40)) * 0.1)
    assert len(default_accountant().ledger) == before                    # refused at planning: nothing spent


# --- 6. a private center that converges -------------------------------------------------------------------------------

def test_center_converges_on_shifted_heavy_tails():
    from dppca_nb.privacy.centering import plan_centered
    from dppca_nb.privacy.releases import plan_second_moment
    mu = np.array([3.0, -2.0, 1.0, 0.5])
    rng = np.random.default_rng(1)
    n = 100_000
    X = mu + rng.standard_normal((n, 4)) / np.sqrt(rng.chisquare(1, (n, 1)))
    err = {loc: np.linalg.norm(plan_centered(lambda e, d, R: plan_second_moment(n, 4, e, d, radius=R), n, 4, 1.0, 1e-6,
                                             radius=1.0, location=loc).release(X, 2).extras["mean"] - mu)
           for loc in ("none", "auto")}
    assert err["none"] > 1.0 and err["auto"] < 0.05, err


def test_location_and_order_publish_the_same_metadata_on_neighbours():
    from dppca_nb.privacy.centering import plan_private_location, plan_order
    X = _spiked(2000, 4)
    Y = X.copy(); Y[0] = 50.0
    pl, po = plan_private_location(2000, 4, 1.0), plan_order(2000, 4, 2, 0.5, 1e-6)
    a, b = pl.release(X, 1), pl.release(Y, 1)
    assert a.contract is b.contract is pl.contract and set(a.extras) == set(b.extras) == set()
    V = np.eye(4)[:, :2]
    c, d = po.release(X, 1, basis=V), po.release(Y, 1, basis=V)
    assert c.contract is d.contract is po.contract and set(c.extras) == set(d.extras) == {"order_variances", "order_total"}


# --- 7. defaults that fit the bundled data ----------------------------------------------------------------------------

def test_default_radius_is_the_private_median_on_the_covtype_sample():
    """The default bound on the covtype sample (10,000 rows, far more than the 640 a private radius needs at epsilon 1):
    the private median of the centered rows' norms, a grid point within a few cells of the exact median (the
    exponential mechanism's rank error at epsilon 0.05 is about 2 / 0.05 ln 886 = 270 ranks of 10,000, and the
    norms' median cell is narrow), so at most about half the rows are clipped (the bound is the upper end of the median's
    grid cell; these rows' norms tie there, so fewer), which clipped_share_ says from that fact."""
    from dppca_nb.data.datasets import load_covtype
    X = load_covtype(source="sample")
    est = AnalyzeGaussPCA(3, random_state=0).fit(X)
    med = float(np.median(np.linalg.norm(X - est.mean_, axis=1)))
    assert abs(np.log(est.radius_ / med)) < 0.1 and est.clipped_share_ == 0.5
    assert 0.25 < est.diagnostics_not_private_["n_clipped"] / len(X) < 0.55


# --- the simulated expected error (adaptive DP-PCA, NSGGD: no error formula) --------------------------------------

def _nsggd_estimator():
    from dataclasses import replace
    from dppca_nb.algorithms.registry import get_algorithm
    from dppca_nb.estimators import make_estimator
    return make_estimator(replace(get_algorithm("nsggd"), estimator="NSGGD"))


def test_simulated_error_is_post_processing_of_the_release():
    "The prediction is recomputed from the released variances and total and public quantities (NSGGD: simulated)."
    from dppca_nb.algorithms.registry import get_algorithm
    from dppca_nb.estimators import simulated_subspace_error
    alg = get_algorithm("nsggd")
    X = X8[:1000]
    est = _nsggd_estimator()(2, epsilon=4.0, n_iter=50, random_state=1).fit(X)
    assert est.expected_error_ is not None
    rel = est._plan(*X.shape, 2).release(X, 1)
    w, t, c = rel.extras["order_variances"], rel.extras["order_total"], rel.extras["main_contract"]
    spec = np.r_[w, np.full(6, (t - w.sum()) / 6)]
    opts = {a: getattr(est, a) for a in alg.options} | ({"radius": rel.extras["radius"]} if "radius" in alg.options else {})
    e, iv = simulated_subspace_error(alg, spec, X.shape[0], 2, c.epsilon, c.delta, options=opts)
    assert (e, iv) == (est.expected_error_, est.expected_error_interval_)
    # the simulated runs are the release's own mechanism: the same plan, the same contract
    sim = alg.plan(X.shape[0], 8, 2, c.epsilon, c.delta, **opts).contract
    assert (sim.epsilon, sim.delta, sim.mechanism, sim.noise_scale) == (c.epsilon, c.delta, c.mechanism, c.noise_scale)


@pytest.mark.parametrize("which", ["adaptive", "nsggd"])
def test_simulated_error_within_a_factor_two_of_the_measured(which):
    "Mean over 4 seeds of the prediction (adaptive: from its own release; NSGGD: simulated) against the measured error, within 2x."
    from dppca_nb.core.linalg import subspace_distance, top_k_eigvecs
    for eps in (0.5, 4.0):
        if which == "adaptive":
            fits = [ESTIMATORS["AdaptiveNoisePCA"](2, epsilon=eps, radius="private", random_state=s).fit(X8) for s in range(4)]
        else:
            fits = [_nsggd_estimator()(2, epsilon=2 * eps, n_iter=50, random_state=s).fit(X8[:1000]) for s in range(4)]
        pairs = []
        for f in fits:
            X = X8 if which == "adaptive" else X8[:1000]
            Y = X - f.mean_
            if hasattr(f, "radius_"): Y = Y * np.minimum(1, f.radius_ / np.linalg.norm(Y, axis=1))[:, None]
            if f.expected_error_ is not None:
                pairs.append((subspace_distance(f.components_.T, top_k_eigvecs(Y.T @ Y, 2)), f.expected_error_))
        assert len(pairs) >= 3, (which, eps, [f.expected_error_note_ for f in fits])
        m, e = np.mean(pairs, axis=0)
        assert 0.5 < e / m < 2, (which, eps, m, e)
        for f in fits:
            if f.expected_error_ is not None: assert f.expected_error_interval_[0] <= f.expected_error_ <= f.expected_error_interval_[1]


def test_simulated_error_says_when_it_cannot_tell():
    "Variances buried in the ordering step's noise (a radius 20 times the rows' norms): no simulated prediction, and why."
    est = _nsggd_estimator()(2, epsilon=1.0, n_iter=50, random_state=0).fit(X8[:1000] * 0.02)
    assert est.expected_error_ is None and "do not stand above the ordering step's noise" in est.expected_error_note_
    off = _nsggd_estimator()(2, order_share=0.0, n_iter=50, random_state=0).fit(X8[:1000])
    assert off.expected_error_ is None and "order_share > 0" in off.expected_error_note_
    assert not hasattr(off, "explained_variance_") and "order" not in dict(off.contract_.parts)


def test_adaptive_error_needs_no_variances():
    "AdaptiveNoisePCA's expected error comes from its own released values: there at a radius 20 times the rows' norms and without the ordering step."
    est = ESTIMATORS["AdaptiveNoisePCA"](2, epsilon=1.0, radius=20.0, random_state=0).fit(X8)
    assert est.expected_error_ is not None and est.expected_error_note_.startswith("E||P_hat - P||_F")
    off = ESTIMATORS["AdaptiveNoisePCA"](2, order_share=0.0, mode="adaptive", random_state=0).fit(X8)   # the steps
    assert off.expected_error_ is not None and not hasattr(off, "explained_variance_")
    assert "order" not in dict(off.contract_.parts)
    ag = ESTIMATORS["AdaptiveNoisePCA"](2, mode="gauss", random_state=0).fit(X8)      # Analyze Gauss's eigenvalues
    assert "order" not in dict(ag.contract_.parts) and hasattr(ag, "explained_variance_")


def test_whiten_refuses_a_zero_variance():
    "whiten divides by the private variances: one that is 0 (below the noise) is a clear error, not a 1e156 score."
    from sklearn import datasets
    X = datasets.load_iris().data
    est = AnalyzeGaussPCA(2, epsilon=1.0, radius=10.0, whiten=True, random_state=3).fit(X)
    assert est.explained_variance_[1] == 0
    with pytest.raises(ValueError, match="whiten: .* component\\(s\\) \\[1\\]"): est.transform(X)
    ok = AnalyzeGaussPCA(2, epsilon=1.0, radius=10.0, whiten=True, random_state=2).fit(X)
    assert np.all(np.isfinite(ok.transform(X))) and np.abs(ok.transform(X)).max() < 100


def test_utility_warning_names_a_coarse_location_at_the_end_of_its_grid():
    "Rows far beyond the location's public grid: the released point is the grid's end, and the warning says so."
    X = np.random.default_rng(0).normal(size=(50000, 3)) * 0.1 + np.array([1e5, 0, 0])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        est = AnalyzeGaussPCA(2, location="private", radius=1.0, random_state=0).fit(X)
    assert est._location_at_edge == (0,)
    msgs = [str(x.message) for x in w if x.category is UtilityWarning]
    assert any("coarse location is at an end of its public grid in coordinate(s) [0]" in m for m in msgs), msgs


def test_non_private_limit_is_ordered_for_every_method():
    "epsilon = inf returns the exact PCA, in decreasing order of variance, also for the subspace-only mechanisms."
    X = np.random.default_rng(0).normal(size=(500, 5)) * np.array([0.3, 0.2, 0.1, 0.05, 0.05])
    for cls in (SmoothSensitivityPCA, PureDPSubspace):
        est = cls(2, epsilon=np.inf).fit(X)
        assert est.components_ordered_ and est.explained_variance_[0] >= est.explained_variance_[1], cls.__name__


def test_coordinate_counts_match_two_searches():
    "The location's per-coordinate counts (a table lookup, two comparisons) equal the two searchsorted counts exactly."
    from dppca_nb.privacy.centering import _coordinate_counts, location_grid
    g = location_grid(10_000, None)
    x = np.random.default_rng(0).normal(size=(3000, 7)) * 0.05
    x[:50, 0], x[50:60, 3], x[60:70, 4], x[70:80, 5], x[80:90, 6] = g[100], g[0], np.nan, -1e9, 1e9
    x[90:95, 4], x[95:100, 4], x[100:105, 5] = np.inf, -np.inf, -0.0
    naive = np.stack([np.stack([np.bincount(np.searchsorted(g, x[:, j], side=s), minlength=g.size + 1)
                                for j in range(7)]) for s in ("right", "left")], axis=1)
    assert np.array_equal(_coordinate_counts(x, g), naive)
