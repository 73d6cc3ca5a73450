"""The adaptive DP-PCA's expected error (`algorithms.adaptive.adaptive_error_model`): post-processing of its own released
values, their public noise scales, and within a factor 2 of the measured error fit by fit."""
import math
import warnings

import numpy as np
import pytest

from dppca_nb.algorithms.adaptive import (adaptive_error_model, clipping_factor, gradient_sensitivity,
                                          plan_adaptive_dp_kpca)
from dppca_nb.algorithms.adaptive_budget import adaptive_budget
from dppca_nb.core.linalg import subspace_distance, top_k_eigvecs
from dppca_nb.data.datasets import reference_design, sample_gaussian
from dppca_nb.estimators import ESTIMATORS
from dppca_nb.estimators.quality import error_model_value
from dppca_nb.privacy.mechanisms import gaussian_sigma

warnings.filterwarnings("ignore")


def _design(p, k, n, seed):
    Sig, _ = reference_design(p, k, 0.05, trace=0.25, random_state=100 + seed)
    return sample_gaussian(Sig, n, 200 + seed)


def _measured(est, X):
    "The distance to the non-private PCA of the rows as the fit centred and clipped them (curator-only)."
    Y = X - est.mean_
    Y = Y * np.minimum(1, est.radius_ / np.linalg.norm(Y, axis=1))[:, None]
    return subspace_distance(est.components_.T, top_k_eigvecs(Y.T @ Y, est.n_components_))


@pytest.mark.parametrize("k", [1, 2])
def test_expected_error_within_two_of_the_measured_fit_by_fit(k):
    """Each fit's expected error within a factor 2 of its measured error (the reference design at p = 50, n = 300p, the
    estimator's defaults: radius 'auto', here the private median of the centred rows' norms, private centering, epsilon
    1; benchmarks/adaptive_default.md measures 0.84-1.28 per fit there, 0.58-3.14 at the public bound 2).
    The tolerance: ||P_hat - P||_F^2 is a sum of about k (p - k) squared, nearly independent Gaussian terms, so the
    measured error fluctuates around its mean by a relative sd of about 1 / sqrt(2 k (p - k)) (0.10 at k = 1, 0.07 at
    k = 2); a factor 2 is more than 7 such sd, what remains is the first-order model's own bias."""
    p, n = 50, 15000
    for s in range(4):
        X = _design(p, k, n, s)
        est = ESTIMATORS["AdaptiveNoisePCA"](k, epsilon=1.0, delta=1e-5, random_state=s).fit(X)
        m, e = _measured(est, X), est.expected_error_
        assert e is not None, est.expected_error_note_
        assert 0.5 < e / m < 2, (k, s, m, e)
        lo, hi = est.expected_error_interval_
        assert lo <= e <= hi


def test_expected_error_is_post_processing_of_the_release():
    "The estimator's number is the hook's, recomputed from the release's extras, its contract and public quantities."
    p, k, X = 20, 2, _design(20, 2, 6000, 0)
    est = ESTIMATORS["AdaptiveNoisePCA"](k, epsilon=1.0, delta=1e-5, random_state=3).fit(X)
    rel = est._plan(*X.shape, k).release(X, 3)
    opts = {a: getattr(est, a) for a in est._algorithm().options}
    model = adaptive_error_model(rel.extras["main_contract"], rel.extras, dict(n=len(X), p=p, k=k, options=opts))
    e, (lo, hi) = error_model_value(model, p, k)
    # the same numbers: where the release is Analyze Gauss's finish, the estimator computes the hook's matrix formula
    # itself from the release's own eigenvalues and noise sd (equal up to rounding)
    assert np.allclose([e, lo, hi], [est.expected_error_, *est.expected_error_interval_], rtol=1e-12, atol=0)
    # the hook reads released values only: without them it says nothing
    assert adaptive_error_model(rel.extras["main_contract"], {}, dict(n=len(X), p=p, k=k)) is None


def test_step_noise_is_the_contracts():
    "Each step's published noise sd is min(2 tau, c R^2) / (b mu_j): its released spread, its public size and pass ratio."
    p, k, n, R = 20, 2, 6000, 1.0
    X = _design(p, k, n, 1)
    plan = plan_adaptive_dp_kpca(n, p, k, 1.0, 1e-5, radius=R)
    rel = plan.release(X, 5)
    assert rel.extras["mode"] == "adaptive"
    bud = adaptive_budget(n, k, 1.0, 1e-5, subspace="block", n_passes=2, warm_share=0.1, final_share=0.75,
                          spread_share=0.1, spread_quantile=0.5)
    taus, sizes = list(rel.extras["spreads"][0]), [b for ps in rel.extras["schedule"][0] for b in ps]
    mus = [mu for ps, mu in zip(rel.extras["schedule"][0], bud["mu_pass"]) for _ in ps]
    want = [gradient_sensitivity(t, R, b, k) / mu for t, b, mu in zip(taus, sizes, mus)]
    got = [s for ps in rel.extras["step_sd"][0] for s in ps]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert len(rel.extras["rayleigh"]) == k and np.all(np.diff(rel.extras["rayleigh"]) <= 0)   # the block's order


def test_gauss_finish_noise_scale():
    "Analyze Gauss from the start (the spreads too dear): its released eigenvalues carry the contract's noise scale."
    p, k, n, R = 50, 3, 500, 1.0
    X = _design(p, k, n, 0)
    plan = plan_adaptive_dp_kpca(n, p, k, 1.0, 1e-5, radius=R)
    rel = plan.release(X, 0)
    assert rel.extras["mode"] == "gauss"
    assert rel.extras["eigenvalue_sd"] == rel.contract.noise_scale == gaussian_sigma(1.0, 1e-5, math.sqrt(2) * R * R / n)
    model = adaptive_error_model(rel.contract, rel.extras, dict(n=n, p=p, k=k))
    assert model.kind == "matrix" and model.scale == rel.extras["eigenvalue_sd"]


def test_neighbours_publish_the_same_metadata():
    """Replace-one neighbours, the same seed: the contract and the note are identical, and the error's public inputs
    are the contract's functions of the released spreads (so they move only with the noisy releases)."""
    p, k = 20, 2
    X = _design(p, k, 4000, 2)
    Y = X.copy(); Y[0] = 0.9 * np.eye(p)[p - 1]                          # one row replaced by another in the ball
    fits = [ESTIMATORS["AdaptiveNoisePCA"](k, epsilon=1.0, delta=1e-5, radius=1.0, centering="none",
                                           random_state=7).fit(Z) for Z in (X, Y)]
    assert fits[0].contract_.statement() == fits[1].contract_.statement()
    assert fits[0].expected_error_note_ == fits[1].expected_error_note_
    assert all(f.expected_error_ is not None for f in fits)


def test_clipping_factor():
    "At factor 1 around the median half the gradients are clipped: the mean factor lies in (1/2, 1); a huge factor clips none."
    lam = np.r_[0.05, np.full(19, 0.004)]
    f = clipping_factor(lam, 1, 0.5, 1.0)
    assert 0.5 < f < 1
    assert clipping_factor(lam, 1, 0.5, 1e6) == 1.0


def test_gauss_finish_after_the_warm_start():
    """Where the probe sends the passes' budget to a second Analyze Gauss release, the combination w0 S0 + (1 - w0) S1
    (w0 = mu_0^2 / mu^2) has diagonal noise sd sqrt(w0^2 s0^2 + (1 - w0)^2 s1^2) = s0 mu_0 / mu, s1 = s0 mu_0 / mu_rest."""
    from dppca_nb.data.datasets import signed_spike
    n, p, k = 20_000, 100, 3
    X, _ = signed_spike(n, p, k, spike=[0.5, 0.4, 0.3], sigma0=1e-3, random_state=7)
    rel = plan_adaptive_dp_kpca(n, p, k, 1.0, 1e-5).release(X, 4)
    assert rel.extras["mode"] == "gauss" and "warm_eigenvalues" in rel.extras
    bud = adaptive_budget(n, k, 1.0, 1e-5, subspace="block", n_passes=2, warm_share=0.1, final_share=0.75,
                          spread_share=0.1, spread_quantile=0.5)
    s0 = dict(rel.contract.parts)["warm start"].noise_scale
    mu, mu0 = bud["mu"], bud["mu_warm"]
    w0, s1 = mu0 ** 2 / mu ** 2, s0 * mu0 / math.sqrt(mu ** 2 - mu0 ** 2)
    assert math.isclose(rel.extras["eigenvalue_sd"], math.sqrt(w0 ** 2 * s0 ** 2 + (1 - w0) ** 2 * s1 ** 2), rel_tol=1e-12)
    assert math.isclose(rel.extras["eigenvalue_sd"], s0 * mu0 / mu, rel_tol=1e-12)
