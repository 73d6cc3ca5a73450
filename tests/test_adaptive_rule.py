"""AdaptiveNoisePCA's public rule (`algorithms.adaptive.gauss_from_start`, the registration's `fit_options`): at the
private radius with n epsilon / p below GAUSS_FROM_START the estimator's fit is AnalyzeGaussPCA's, its contract
included; the rule reads public quantities only, so replace-one neighbours publish the same metadata."""
import warnings

import numpy as np
import pytest

from dppca_nb.algorithms import adaptive
from dppca_nb.algorithms.adaptive import GAUSS_FROM_START, _fit_options, gauss_from_start, plan_adaptive_dp_kpca
from dppca_nb.data.datasets import reference_design, sample_gaussian
from dppca_nb.estimators import AdaptiveNoisePCA, AnalyzeGaussPCA

warnings.filterwarnings("ignore")
OPTS = dict(subspace="block", n_passes=2, warm_share=0.1, final_share=0.75, spread_share=0.1, spread_quantile=0.5)


def _design(p, k, n, seed):
    Sig, _ = reference_design(p, k, 0.05, trace=0.25, random_state=100 + seed)
    return sample_gaussian(Sig, n, 200 + seed)


def _has_steps(c) -> bool:
    return any(a == "gradient" or _has_steps(b) for a, b in (c.parts or ()))


def test_the_rule_boundary():
    "n epsilon / p just below the threshold: Analyze Gauss; at it: not (integers n, p with n eps / p exactly T)."
    p, T = 20, GAUSS_FROM_START
    n = int(T * p)                                               # n epsilon / p = T at epsilon 1
    assert gauss_from_start(n - 1, p, 1.0) and not gauss_from_start(n, p, 1.0)
    assert gauss_from_start(n // 10 - 1, p, 10.0) and not gauss_from_start(n // 10, p, 10.0)
    with pytest.raises(ValueError, match="epsilon"): gauss_from_start(n, p, -1.0)


def test_fit_options_only_at_the_private_radius_and_in_auto_mode():
    "The estimator's rule: mode 'gauss' and no ordering step at the private radius below T; nothing else changes."
    n, p, k = 2000, 20, 2                                         # n eps / p = 100 < T, the spreads affordable
    assert _fit_options(n, p, k, 1.0, 1e-5, radius="private", mode="auto", **OPTS) == {"mode": "gauss", "order_share": 0.0}
    assert _fit_options(n, p, k, 1.0, 1e-5, radius=2.0, mode="auto", **OPTS) == {}       # a public bound: the steps
    assert _fit_options(n, p, k, 1.0, 1e-5, radius="private", mode="adaptive", **OPTS) == {}
    big = int(GAUSS_FROM_START * p)
    assert _fit_options(big, p, k, 1.0, 1e-5, radius="private", mode="auto", **OPTS) == {}
    assert _fit_options(100, p, k, 1.0, 1e-5, radius=2.0, mode="auto", **OPTS) == {"order_share": 0.0}   # spreads too dear


def test_small_tables_fit_is_analyze_gauss():
    """At n/p = 40, epsilon 3 (n eps / p = 120) the default fit is AnalyzeGaussPCA's default fit: the same contract
    statement for the components, the same components, variances and expected error, the same radius and mean."""
    p, k, n = 20, 2, 800
    X = _design(p, k, n, 0)
    a = AdaptiveNoisePCA(k, epsilon=3.0, delta=1e-5, random_state=3).fit(X)
    g = AnalyzeGaussPCA(k, epsilon=3.0, delta=1e-5, random_state=3).fit(X)
    assert not _has_steps(a.contract_)
    assert a.radius_ == g.radius_ and np.array_equal(a.mean_, g.mean_)
    assert np.array_equal(a.components_, g.components_)
    assert np.array_equal(a.explained_variance_, g.explained_variance_) and a.expected_error_ == g.expected_error_
    assert a.contract_.epsilon == g.contract_.epsilon and a.contract_.delta == g.contract_.delta
    assert [x for x, _ in a.contract_.parts] == [x for x, _ in g.contract_.parts]        # no ordering step spent
    for (_, c), (_, d) in zip(a.contract_.parts, g.contract_.parts):                     # each part at AG's budget
        assert (c.epsilon, c.delta, c.sensitivity, c.noise_scale) == (d.epsilon, d.delta, d.sensitivity, d.noise_scale)
        assert c.mechanism.startswith(d.mechanism)                  # the main part's says why it is Analyze Gauss


def test_above_the_threshold_the_steps_run():
    "n eps / p = 2000 >= T at the private radius: the adaptive steps' contract (a gradient part)."
    p, k, n = 20, 1, 4000
    X = _design(p, k, n, 1)
    assert not gauss_from_start(n, p, 10.0)
    assert _has_steps(AdaptiveNoisePCA(k, epsilon=10.0, delta=1e-5, random_state=0).fit(X).contract_)


def test_mode_gauss_plan_is_analyze_gauss():
    "mode='gauss' in the algorithm: Analyze Gauss's plan (its noise scale) with the adaptive release's extras."
    from dppca_nb.algorithms.baselines import analyze_gauss, plan_analyze_gauss
    p, k, n = 20, 2, 3000
    X = _design(p, k, n, 2)
    rel = plan_adaptive_dp_kpca(n, p, k, 1.0, 1e-5, mode="gauss").release(X, 5)
    assert rel.extras["mode"] == "gauss" and rel.extras["n_steps"] == 0 and rel.extras["spreads"] == []
    assert rel.contract.noise_scale == plan_analyze_gauss(n, p, k, 1.0, 1e-5).contract.noise_scale == rel.extras["eigenvalue_sd"]
    assert np.array_equal(rel.value, analyze_gauss(X, k, 1.0, 1e-5, random_state=5))


def test_neighbours_publish_the_same_metadata_under_the_rule():
    """Replace-one neighbours at the same seed, the rule in force (n eps / p = 60): the same contract and privacy
    statement, the same published mode (the rule reads n, p, epsilon and the planned radius only)."""
    p, k, n = 20, 2, 400
    X = _design(p, k, n, 4)
    Y = X.copy(); Y[0] = 3.0 * np.eye(p)[0]                                  # one row replaced, far outside the others
    fits = [AdaptiveNoisePCA(k, epsilon=3.0, delta=1e-5, random_state=11).fit(Z) for Z in (X, Y)]
    assert fits[0].contract_.statement() == fits[1].contract_.statement()
    assert fits[0].privacy_ == fits[1].privacy_
    assert not _has_steps(fits[0].contract_) and not _has_steps(fits[1].contract_)


def test_rule_off_restores_the_steps(monkeypatch):
    "With the threshold at 0 (the benchmark's 'steps' column) the same small fit runs the adaptive steps."
    monkeypatch.setattr(adaptive, "GAUSS_FROM_START", 0.0)
    X = _design(20, 2, 800, 0)
    assert _has_steps(AdaptiveNoisePCA(2, epsilon=3.0, delta=1e-5, random_state=3).fit(X).contract_)
