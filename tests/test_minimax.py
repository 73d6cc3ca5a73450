"""minimax_lower_bound against the package's estimators on a grid, its invariants, and its bad-input errors.

A bound is a lower bound for every estimator of its class: each package estimator of the class must have a measured mean
error at least `lower`. The mean of r runs (fresh rows and fresh noise each) has standard error sd / sqrt(r); a check fails
only if the mean plus three standard errors is still below `lower` (one-sided, a false alarm below 0.2% for a normal mean).
Each bound is a lower bound on the Bayes risk of its prior, so every estimator is measured on parameters drawn from that
prior (rotation equivariant or not): every registered worst-case algorithm of the class, read from the registry, and
algorithms outside the registry (constants, a random guess, Gaussian and Laplace mechanisms that know the rows' scale).
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
    "Every registered worst-case algorithm of a privacy class (theory.minimax.class_algorithms)."
    from dppca_nb.theory.minimax import class_algorithms
    return class_algorithms(model)


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


# ---------------------------------------------------------------------------------------------------------------------
# algorithms outside the registry: each is private for every input (or uses no data), so every bound of its class holds

def _constant(X, k, e, d, random_state=None):
    "V_0 = e_1..e_k whatever the data (every privacy class): on a prior near V_0, the prior-exploiting shrinkage."
    return np.eye(X.shape[1])[:, :k]


def _random_guess(X, k, e, d, random_state=None):
    from dppca_nb.core.linalg import random_orthonormal
    return random_orthonormal(X.shape[1], k, random_state=random_state)


def _oracle_clip(X, radius):
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.maximum(1.0, norms / radius)


def _oracle_gauss(radius):
    """Analyze Gauss at the rows' own scale (a clipping radius set from the spectrum, public here): (epsilon, delta)-DP for
    every input (replace-one: ||xx' - yy'||_F <= sqrt(2) radius^2 for the clipped rows; symmetric noise, every entry of
    the upper triangle N(0, sigma^2) with the analytic calibration)."""
    from dppca_nb.privacy.mechanisms import gaussian_sigma
    def f(X, k, e, d, random_state=None):
        n, p = X.shape
        Y = _oracle_clip(X, radius)
        sig = gaussian_sigma(e, d, math.sqrt(2) * radius ** 2 / n)
        G = np.triu(np.random.default_rng(random_state).standard_normal((p, p)) * sig)
        return np.linalg.eigh(Y.T @ Y / n + G + np.triu(G, 1).T)[1][:, -k:]
    return f


def _oracle_laplace(radius):
    """The same at pure epsilon-DP: Laplace noise on the upper triangle (with the diagonal). Replace-one l1 sensitivity of
    the clipped average: ||u(x) - u(y)||_1 <= ||u(x)||_1 + ||u(y)||_1, ||u(x)||_1 = (||x||_1^2 + ||x||^2) / 2n <= (p + 1) r^2 / 2n."""
    def f(X, k, e, d, random_state=None):
        n, p = X.shape
        Y = _oracle_clip(X, radius)
        G = np.triu(np.random.default_rng(random_state).laplace(0.0, (p + 1) * radius ** 2 / (n * e), (p, p)))
        return np.linalg.eigh(Y.T @ Y / n + G + np.triu(G, 1).T)[1][:, -k:]
    return f


def _adversaries(lam, pure):
    r = math.sqrt(1.5 * float(np.sum(lam)))                    # about the rows' own norm: rarely clipped, no noise wasted
    return {"constant": _constant, "random_guess": _random_guess, **({"oracle_laplace": _oracle_laplace(r)} if pure else
                                                                      {"oracle_gauss": _oracle_gauss(r)})}


WIDE = np.array([0.02, 0.015] + [0.002] * 98)                # p = 100, k = 2: every central algorithm at the random level


@pytest.mark.parametrize("n,eps", [(2_000, 0.1), (2_000, 0.3), (10_000, 0.05)])
def test_central_bound_sees_what_privacy_costs(n, eps):
    """Where every central algorithm of the package sits at the random level (n epsilon <= 600), the central bound is at
    least 3x the non-private floor and the best registered central algorithm is within 10x of it. (Before the tracing
    bound, lower was the floor, 0.059 and 0.027 here: this test failed.)"""
    m = minimax_lower_bound("central", n=n, p=100, k=2, epsilon=eps, delta=DELTA, eigenvalues=WIDE)
    assert m.lower >= 3 * m.statistical and m.prior.kind == "haar"
    means = {}
    for name, f in {**_estimators("central"), **_adversaries(WIDE, False)}.items():
        mean, se = _measure(f, n, 2, eps, DELTA, bound=m, reps=2)
        assert mean + 3 * se >= m.lower, (name, mean, se, m.lower)
        means[name] = mean
    best = min(v for key, v in means.items() if key in _estimators("central"))
    assert best <= 10 * m.lower, (best, m.lower)


def test_central_bound_below_g_dppca_where_it_works():
    "At n = 10,000 and epsilon = 0.3 g-DPPCA leaves the random level (about 0.76): the bound (0.041) stays below it."
    m = minimax_lower_bound("central", n=10_000, p=100, k=2, epsilon=0.3, delta=DELTA, eigenvalues=WIDE)
    mean, se = _measure(_estimators("central")["g_dppca"], 10_000, 2, 0.3, DELTA, bound=m, reps=2)
    assert mean < 1.2 and mean + 3 * se >= m.lower > m.statistical


# a grid this bound was not tuned to: random spread spectra, several dimensions, epsilon from 0.02 to 2
_RNG = np.random.default_rng(20240501)
UNTUNED = [(int(p), int(k), float(e), int(n), np.sort(_RNG.uniform(0.2, 1.0, p))[::-1] * (np.r_[np.full(k, 3.0), np.ones(p - k)])
            / (1.2 * p)) for p, k, e, n in ((30, 1, 0.02, 3_000), (30, 3, 0.2, 1_000), (60, 2, 0.05, 5_000), (60, 4, 1.0, 2_000),
                                            (16, 2, 2.0, 400), (45, 5, 0.5, 800))]


@pytest.mark.parametrize("p,k,eps,n,lam", UNTUNED, ids=[f"p{u[0]}k{u[1]}e{u[2]}n{u[3]}" for u in UNTUNED])
def test_no_false_bound_off_the_tuned_grid(p, k, eps, n, lam):
    "Central and central-pure bounds below every registered algorithm and every adversary, on the bound's own prior."
    for model in ("central", "central_pure"):
        delta = 0.0 if model.endswith("_pure") else DELTA
        m = minimax_lower_bound(model, n=n, p=p, k=k, epsilon=eps, delta=delta, eigenvalues=lam)
        assert m.statistical <= m.lower <= m.cap
        ests = {key: f for key, f in _estimators(model).items() if key not in ("pure_dp_subspace", "nsggd")}
        for name, f in {**ests, **_adversaries(lam, model.endswith("_pure"))}.items():
            mean, se = _measure(f, n, k, eps, delta, bound=m, reps=2)
            assert mean + 3 * se >= m.lower, (model, name, mean, se, m.lower)


def test_tracing_bound_limits_and_order():
    "epsilon -> 0: sqrt(2k)(1 - k/p) on a two-level spectrum (below the random level); the rate sqrt(pi) d/(n sinh(eps) sqrt(w))."
    from dppca_nb.theory.minimax import tracing_lower
    from dppca_nb.core.linalg import random_subspace_level
    lam = np.array([1.0] * 2 + [0.25] * 8)                       # w = 2.25 for every pair, d = 16
    assert tracing_lower(50, lam, 2, 1e-9, 0.0)[0] == pytest.approx(2 * 0.8, rel=1e-6) and 2 * 0.8 < random_subspace_level(10, 2)
    v = tracing_lower(10 ** 4, lam, 2, 0.5, 0.0)[0]
    assert v == pytest.approx(math.sqrt(math.pi) * 16 / (10 ** 4 * math.sinh(0.5) * 1.5), rel=2e-3)
    b = [tracing_lower(n, lam, 2, e, DELTA)[0] for n, e in ((1000, 0.1), (1000, 0.3), (3000, 0.3))]
    assert b[0] > b[1] > b[2] > 0
    assert tracing_lower(1000, lam, 2, 0.3, 0.0)[0] > tracing_lower(1000, lam, 2, 0.3, 1e-3)[0]   # delta costs the bound
    for e in (1e-3, 0.1, 1.0):                                   # a pure bound is never below the approximate one
        pure = minimax_lower_bound("central_pure", n=500, p=10, k=2, epsilon=e, eigenvalues=lam)
        assert pure.lower >= minimax_lower_bound("central", n=500, p=10, k=2, epsilon=e, delta=DELTA, eigenvalues=lam).lower


@pytest.mark.parametrize("privacy", ["local", "local_pure"])
def test_sparse_prior_is_the_reported_bounds(privacy):
    """Where the floor binds, `prior` and `draw()` are the floor's: the constant e_1 is measured on draws and must score at
    least `lower`. (Before: the prior came from the private bound, e_1 scored 2.7e-4 against lower 0.072: this failed.)"""
    lam = [0.3] + [0.05] * 7
    m = minimax_lower_bound("sparse", n=20, p=8, k=1, epsilon=8.0, delta=0.0 if privacy.endswith("_pure") else DELTA,
                            eigenvalues=lam, s=3, privacy=privacy)
    assert m.lower == m.statistical > m.privacy
    errs = [subspace_distance(np.eye(8)[:, :1], m.draw(r)[1]) for r in range(200)]
    # a constant's error on the sparse-sign prior is the same for every draw (exact, no Monte Carlo margin needed)
    assert np.ptp(errs) < 1e-9 and np.mean(errs) >= m.lower
    assert "floor binds" in m.notes[-1]


def test_every_prior_is_the_reported_bounds():
    "For every model, the constant V_0 on the prior's draws scores at least lower (its error is a function of the prior alone)."
    lam = np.array([0.3, 0.12] + [0.05] * 6)
    for model, kw in (("local", {}), ("local_pure", {}), ("central", {}), ("central_pure", {}), ("sparse", dict(s=4))):
        for n, eps in ((30, 8.0), (3_000, 0.5), (50, 0.02)):
            delta = 0.0 if model.endswith("_pure") else DELTA
            m = minimax_lower_bound(model, n=n, p=8, k=1, epsilon=eps, delta=delta, eigenvalues=lam, **kw)
            errs = [subspace_distance(np.eye(8)[:, :1], m.draw(r)[1]) for r in range(100)]
            assert np.mean(errs) + 3 * np.std(errs, ddof=1) / 10 >= m.lower, (model, n, eps, np.mean(errs), m.lower)


@pytest.mark.parametrize("eps", [119.0, 356.0, 710.0, 1e3, 1e6, math.inf])
def test_large_epsilon_no_overflow(eps):
    """Work in logs: no OverflowError at any epsilon; at epsilon = inf the bound is the non-private floor. (Before: local
    raised at epsilon >= 119, local-pure at >= 356, central at >= 710, and epsilon = inf was refused.)"""
    lam = [0.3, 0.12] + [0.05] * 6
    for model in ("central", "central_pure", "local", "local_pure", "sparse", "sparse_covariance"):
        delta = 0.0 if model.endswith("_pure") else DELTA
        kw = dict(eigenvalues=[0.1] * 8, s=2) if model == "sparse_covariance" else dict(k=1, eigenvalues=lam, **(dict(s=3) if model == "sparse" else {}))
        m = minimax_lower_bound(model, n=1000, p=8, epsilon=eps, delta=delta, **kw)
        assert np.isfinite(m.lower) and m.lower >= m.statistical - 1e-15
        if math.isinf(eps): assert m.lower == m.statistical and "epsilon = inf" in m.notes[-1]


def test_price_of_privacy_curves():
    "The curves of one algorithm along n epsilon: measured above its class bound, the class bound above the floor."
    from dppca_nb.theory.price import price_of_privacy, privacy_class
    lam = np.array([0.25] * 2 + [0.0625] * 8)
    c = price_of_privacy("analyze_gauss", 10, 2, lam, [5.0, 50.0, 5000.0], n=1000, reps=2, random_state=1)
    assert c["privacy_class"] == "central" and np.allclose(c["epsilon"] * 1000, [5.0, 50.0, 5000.0])
    assert np.all(c["floor"] <= c["class_lower"] + 1e-15) and np.all(c["mean"] + 3 * c["se"] >= c["class_lower"])
    assert c["class_lower"][0] > 3 * c["floor"][0] and c["class_lower"][-1] == c["floor"][-1]
    assert privacy_class("smooth_sensitivity_pca", 0.0) == "central_pure" and privacy_class("local_gaussian_pca", DELTA) == "local"
    with pytest.raises(ValueError, match="n, epsilon"):
        price_of_privacy("analyze_gauss", 10, 2, lam, [5.0], n=100, epsilon=0.1)
    with pytest.raises(ValueError, match="n_epsilon"):
        price_of_privacy("analyze_gauss", 10, 2, lam, [-1.0], n=100)
    with pytest.raises(ValueError, match="method"):
        price_of_privacy("dp_threshold_covariance", 10, 2, lam, [5.0], n=100)


def test_price_figure_names_the_extra_it_lacks():
    "Drawing needs matplotlib (the [experiments] extra): without it the error names the extra; the curves need none."
    import unittest.mock
    from dppca_nb.core.extras import MissingExtraError
    from dppca_nb.theory.price import draw_price_of_privacy
    real = __import__("importlib.util").util.find_spec
    with unittest.mock.patch("importlib.util.find_spec", lambda m, *a: None if m == "matplotlib" else real(m, *a)):
        with pytest.raises(MissingExtraError, match=r"draw_price_of_privacy needs the \[experiments\] extra"):
            draw_price_of_privacy({})
