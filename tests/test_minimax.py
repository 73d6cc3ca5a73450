"""minimax_lower_bound against the package's estimators on a grid, its invariants, and its bad-input errors.

A bound is a lower bound for every estimator of its class: each package estimator of the class must have a measured mean
error at least `lower`. The mean of r runs (fresh rows and fresh noise each) has standard error sd / sqrt(r); a check fails
only if the mean plus three standard errors is still below `lower` (one-sided, a false alarm below 0.2% for a normal mean).
Each bound is the Bayes risk of its prior, so every estimator is measured on parameters drawn from that prior (rotation
equivariant or not): every registered worst-case algorithm of the class, read from the registry.
"""
import math
import warnings

import numpy as np
import pytest

from dppca_nb.bounds import minimax_lower_bound, MINIMAX_MODELS, MinimaxBound
from dppca_nb.algorithms.baselines import analyze_gauss
from dppca_nb.algorithms.local_sparse import local_sparse_pca
from dppca_nb.algorithms.sparse_cov import dp_threshold_covariance
from dppca_nb.core.linalg import subspace_distance
from dppca_nb.data.datasets import sample_gaussian

DELTA = 1e-5


def _estimators(model):
    """Every registered worst-case algorithm of a privacy class, called as f(X, k, epsilon, delta, random_state): the
    class's lower bound (the Bayes risk of its prior) holds for each of them, whatever the algorithm."""
    from dppca_nb.algorithms.registry import algorithms
    pure = model.endswith("_pure")
    out = {}
    for a in algorithms().values():
        if a.output != "subspace" or not a.worst_case or a.model != model.removesuffix("_pure"): continue
        if (a.measure == "pure") != pure and not a.measure.startswith("pure when"): continue
        out[a.key] = lambda X, k, e, d, random_state=None, a=a: a.run(X, k, e, d, random_state=random_state, **a.quick).value
    return out


def _spectrum(name, p, k):
    if name == "spiked":                                   # Wang & Xu's spiked covariance, lambda = 3
        c = 1 / (5 * p * 4)
        return np.array([4 * c] * k + [c] * (p - k))
    return np.array([0.45 / k] * k + [0.45 / (p - k)] * (p - k))     # half of a trace of 0.9 in the top k


def _measure(f, n, k, eps, delta, lam=None, bound=None, reps=3, seed=0):
    errs = []
    for r in range(reps):
        S, V = bound.draw(seed + r) if bound is not None else (np.diag(lam), np.eye(len(lam))[:, :k])
        X = sample_gaussian(S, n, random_state=seed + 100 + r)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            errs.append(subspace_distance(f(X, k, eps, delta, random_state=seed + r), V))
    return float(np.mean(errs)), float(np.std(errs, ddof=1) / math.sqrt(reps))


GRID = [(model, spec, p, k, eps, n) for (model, ns) in (("central", (1_000, 20_000)), ("central_pure", (5_000,)), ("local", (200_000,)))
        for spec in ("spiked", "balanced") for (p, k) in ((8, 2), (12, 3)) for eps in (0.5, 2.0) for n in ns]


@pytest.mark.parametrize("model,spec,p,k,eps,n", GRID)
def test_lower_below_every_estimator_of_the_class(model, spec, p, k, eps, n):
    lam = _spectrum(spec, p, k)
    delta = 0.0 if model.endswith("_pure") else DELTA
    m = minimax_lower_bound(model, n=n, p=p, k=k, epsilon=eps, delta=delta, eigenvalues=lam)
    assert 0 < m.lower <= m.cap and m.conditions_hold
    ests = _estimators(model)
    assert len(ests) >= {"central": 4, "central_pure": 2, "local": 2}[model], sorted(ests)
    for name, f in ests.items():
        mean, se = _measure(f, n, k, eps, delta, bound=m)
        assert mean + 3 * se >= m.lower, (name, mean, se, m.lower)


@pytest.mark.parametrize("eps,n", [(0.5, 50_000), (2.0, 100_000)])
def test_bayes_form_algorithm2(eps, n):
    "Algorithm 2 is not equivariant: its mean error over V drawn from the sparse prior is at least the Bayes bound."
    lam = np.array([0.15] + [0.03] * 19)
    for privacy, f in (("local", local_sparse_pca), ("central", analyze_gauss)):
        m = minimax_lower_bound("sparse", n=n, p=20, k=1, epsilon=eps, delta=DELTA, eigenvalues=lam, s=4, privacy=privacy)
        mean, se = _measure(f, n, 1, eps, DELTA, bound=m, reps=4)
        assert mean + 3 * se >= m.lower > 0


@pytest.mark.parametrize("s,n", [(2, 10_000), (5, 100_000)])
def test_bayes_form_dp_thresholding(s, n):
    base = np.full(20, 0.025)
    m = minimax_lower_bound("sparse_covariance", n=n, p=20, epsilon=1.0, delta=DELTA, eigenvalues=base, s=s)
    errs = []
    for r in range(4):
        S, V = m.draw(r)
        assert V is None and np.count_nonzero(np.abs(S[m.prior.hub]) > 0) == s + 1
        errs.append(np.linalg.norm(dp_threshold_covariance(sample_gaussian(S, n, random_state=r), 1.0, DELTA, random_state=r) - S, 2))
    assert np.mean(errs) + 3 * np.std(errs, ddof=1) / 2 >= m.lower > 0


def test_privacy_binds_above_the_floor():
    "lower >= the non-private floor everywhere; strictly above it where privacy binds (local at large n, pure DP at small n eps)."
    lam = _spectrum("balanced", 10, 2)
    for n in (10_000, 100_000, 1_000_000):
        floor = minimax_lower_bound("none", n=n, p=10, k=2, eigenvalues=lam).lower
        for model, eps, delta in (("central", 1.0, DELTA), ("central_pure", 1.0, 0.0), ("local", 1.0, DELTA), ("local_pure", 1.0, 0.0)):
            m = minimax_lower_bound(model, n=n, p=10, k=2, epsilon=eps, delta=delta, eigenvalues=lam)
            assert m.lower >= floor - 1e-15 and m.statistical == pytest.approx(floor, rel=1e-12)
    n = 1_000_000
    floor = minimax_lower_bound("none", n=n, p=10, k=2, eigenvalues=lam).lower
    assert minimax_lower_bound("local", n=n, p=10, k=2, epsilon=0.5, delta=DELTA, eigenvalues=lam).lower > 1.5 * floor
    assert minimax_lower_bound("central_pure", n=60, p=10, k=2, epsilon=0.05, eigenvalues=lam).privacy > \
        minimax_lower_bound("none", n=60, p=10, k=2, eigenvalues=lam).lower


def test_rates_and_order():
    "The floor falls like n^(-1/2); smaller epsilon never lowers a private bound; pure LDP is at least approximate LDP."
    lam = _spectrum("spiked", 20, 3)
    lo = [minimax_lower_bound("none", n=n, p=20, k=3, eigenvalues=lam).lower for n in (10 ** 4, 10 ** 6)]
    assert lo[0] / lo[1] == pytest.approx(10.0, rel=0.25)
    for model, delta in (("local", DELTA), ("local_pure", 0.0)):
        b = [minimax_lower_bound(model, n=10 ** 6, p=20, k=3, epsilon=e, delta=delta, eigenvalues=lam).lower for e in (0.25, 0.5, 1.0)]
        assert b[0] >= b[1] >= b[2]
    a = minimax_lower_bound("local", n=10 ** 6, p=20, k=3, epsilon=0.5, delta=DELTA, eigenvalues=lam).lower
    assert minimax_lower_bound("local_pure", n=10 ** 6, p=20, k=3, epsilon=0.5, eigenvalues=lam).lower >= a


def test_general_spectrum_and_prior_draw():
    "A spectrum that is not two-level uses smaller blocks; the prior's draws have the class's spectrum and lie near V_0."
    lam = np.array([0.3, 0.2, 0.12, 0.05, 0.04, 0.03, 0.02, 0.01])
    m = minimax_lower_bound("central", n=20_000, p=8, k=3, epsilon=1.0, delta=DELTA, eigenvalues=lam)
    assert m.lower > 0 and m.prior.kind == "sphere" and isinstance(m, MinimaxBound)
    S, V = m.draw(0)
    np.testing.assert_allclose(np.linalg.eigvalsh(S)[::-1], lam, atol=1e-12)
    assert subspace_distance(V, np.eye(8)[:, :3]) < 5 * m.lower
    mean, se = _measure(analyze_gauss, 20_000, 3, 1.0, DELTA, lam)
    assert mean + 3 * se >= m.lower
    with pytest.raises(AttributeError): m.lower = 0.0                 # frozen


def test_zero_bottom_spectrum_and_sparse_edge():
    z = minimax_lower_bound("none", n=100, p=5, k=2, eigenvalues=[1, 1, 0, 0, 0])
    assert z.lower == 0.0 and not z.conditions_hold
    e = minimax_lower_bound("sparse", n=1000, p=6, k=2, epsilon=1.0, delta=DELTA, eigenvalues=[2, 2, 1, 1, 1, 1], s=2)
    assert e.lower == 0.0 and not e.conditions_hold


@pytest.mark.parametrize("kwargs,arg", [
    (dict(model="nonsense"), "model"),
    (dict(n=0), "n"),
    (dict(p=1), "p"),
    (dict(k=6), "k"),
    (dict(k=0), "k"),
    (dict(eigenvalues=None), "eigenvalues"),
    (dict(eigenvalues=[1, 1, 1, 1, 1, 1]), "eigenvalues"),             # no eigengap at k = 2
    (dict(eigenvalues=[1, 1, 0.5]), "eigenvalues"),                    # wrong length
    (dict(eigenvalues=[3, 2, 1, 1, -1, 0]), "eigenvalues"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=None), "epsilon"),
    (dict(delta=1.0), "delta"),
    (dict(model="central_pure", delta=1e-6), "delta"),
    (dict(model="sparse", s=1), "s"),
    (dict(model="sparse", s=None), "s"),
    (dict(model="sparse", s=3, privacy="global"), "privacy"),
    (dict(model="sparse_covariance", s=6), "s"),
    (dict(model="sparse_covariance", s=2, eigenvalues=[1, 1, 1, 1, 0, 1]), "eigenvalues"),
])
def test_bad_input(kwargs, arg):
    base = dict(model="central", n=1000, p=6, k=2, epsilon=1.0, delta=DELTA, eigenvalues=[3, 2, 1, 1, 1, 1])
    base.update(kwargs)
    model = base.pop("model")
    with pytest.raises((ValueError, TypeError), match=arg):
        minimax_lower_bound(model, **base)


def test_models_listed():
    assert MINIMAX_MODELS == ("none", "central", "central_pure", "local", "local_pure", "sparse", "sparse_covariance")
