"""Sensitivity tests by adversarial search: the sensitivity each mechanism calibrates its noise to (read from its
contract) is at least the largest change of its deterministic
statistic that we can find over replace-one neighbours -- hand-built worst cases, ~200 random pairs and a short hill-climb -- measured in the norm its noise
uses (upper triangle, Frobenius = vecd, l2, l1) and with the normalisation by n.

Every search also has to reach the value the sensitivity claims to be tight at (so that it is not idle), and
the second moment's `sensitivity_rule="paper"` (1 instead of sqrt 2 for rows in the unit ball) must be caught BELOW
the largest change found: that is why it warns and certifies a larger epsilon.
"""
import math
import warnings

import numpy as np
import pytest

from dppca_nb.core import validation as core
from dppca_nb.backends.statistics import clip_rows

warnings.filterwarnings("ignore", category=RuntimeWarning)

N, P, K = 40, 5, 2
EPS, DLT = 1.0, 1e-5
REL = 1e-9            # floating-point slack on "change <= sensitivity" (a few roundings of O(1) numbers)


# --- the search ------------------------------------------------------------------------------------------

def _replace(X, i, y):
    Y = np.array(X, dtype=np.float64, copy=True)
    Y[i] = y
    return Y


def _unit(v):
    return v / np.linalg.norm(v)


def search(stat, dist, X, R, *, rng, n_random=200, hill=60, rows=None, extra=()):
    """Largest dist(stat(X), stat(X')) over replace-one neighbours X' of X: a row replaced by hand-built worst
    cases (signed basis vectors and sign vectors at the bound, the row negated, an orthogonal row at the bound,
    the same far outside the ball), by `extra` rows, by ~`n_random` random rows of norm up to 2R, then a
    hill-climb from the best replacement. Returns (largest change, (row, replacement))."""
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    T0 = stat(X)
    rows = list(range(min(n, 3))) if rows is None else rows
    cands = []
    for i in rows:
        x = X[i]
        E = np.eye(p)
        cands += [(i, s * R * e) for e in E for s in (1.0, -1.0)]
        cands += [(i, 100 * R * e) for e in E[:2]]                                  # far outside: clipped
        cands += [(i, s * R * np.ones(p) / math.sqrt(p)) for s in (1.0, -1.0)]
        cands += [(i, -x), (i, -100 * x)]
        if np.linalg.norm(x) > 0:
            o = rng.standard_normal(p)
            o -= (o @ x) / (x @ x) * x
            cands.append((i, R * _unit(o)))
        cands += [(i, np.asarray(y, dtype=np.float64)) for y in extra]
    for _ in range(n_random):
        cands.append((int(rng.integers(n)), _unit(rng.standard_normal(p)) * R * 2 * rng.random()))
    best, arg = -1.0, None
    for i, y in cands:
        d = dist(T0, stat(_replace(X, i, y)))
        if d > best: best, arg = d, (i, y)
    i, y = arg
    step = 0.3 * R
    for _ in range(hill):                          # crude hill-climb on the replacement row
        y2 = y + step * rng.standard_normal(p)
        d = dist(T0, stat(_replace(X, i, y2)))
        if d > best: best, y = d, y2
        else: step *= 0.95
    return best, (i, y)


def upper(A, B):
    "l2 norm of the upper triangle (diagonal included) of A - B: the weighting of kind='upper' noise."
    D = np.asarray(A) - np.asarray(B)
    return float(np.linalg.norm(D[np.triu_indices(D.shape[0])]))


def frobenius(A, B):
    "Frobenius norm of A - B = l2 norm of vecd(A - B) = (d_ii, sqrt2 d_ij): the weighting of kind='vecd' noise."
    return float(np.linalg.norm(np.asarray(A) - np.asarray(B)))


def l2(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)))


def l1(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).sum())


def _data(seed, n=N, p=P, scale=0.4):
    X = np.random.default_rng(seed).normal(size=(n, p)) * scale
    return X


# --- the second moment (1/n) sum clip(x) clip(x)^T -------------------------------------------------------

def second_moment(R):
    def stat(X):
        Xc = clip_rows(X, R)[0]
        return Xc.T @ Xc / Xc.shape[0]
    return stat


def _second_moment_algorithms():
    "The registered central releases of the clipped second moment: the algorithms whose planner takes a `noise_shape`."
    from _helpers import ALGORITHMS
    return {a.key: a for a in ALGORITHMS if a.model == "central" and "noise_shape" in a.options}


SM_ALGORITHMS = _second_moment_algorithms()


def _sm_contract(fn, rule, R, X, **kw):
    "The contract of a second-moment release (it states the sensitivity the noise is calibrated to)."
    from dppca_nb.privacy import releases
    opts = dict(sensitivity_rule=rule, radius=R, random_state=0, return_release=True, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fn == "gaussian_second_moment": return releases.gaussian_second_moment(X, EPS, DLT, **opts).contract
        if fn == "gaussian_second_moment[dask]": return releases.gaussian_second_moment(_dask(X), EPS, DLT, **opts).contract
        return SM_ALGORITHMS[fn].function(X, *([K] if SM_ALGORITHMS[fn].output == "subspace" else []), EPS, DLT, **opts).contract


# the building block (on a numpy and on a dask array), then every registered algorithm built on it
SM_FUNCS = ["gaussian_second_moment", "gaussian_second_moment[dask]", *SM_ALGORITHMS]


def test_second_moment_family_is_found():
    "Not idle: the registry's second-moment releases are found (the covariance ones and Analyze Gauss at least)."
    assert {"covariance", "subspace"} <= {a.output for a in SM_ALGORITHMS.values()}


def _dask(X):
    import dask.array as da
    return da.from_array(X, chunks=(max(1, X.shape[0] // 4), X.shape[1]))      # 4 row blocks
_SM_CACHE = {}


def _sm_search(R, dist):
    "The largest change found of the second moment (rows clipped to R) in `dist`, over several base data sets."
    key = (R, dist.__name__)
    if key not in _SM_CACHE:
        rng = np.random.default_rng(1)
        best = 0.0
        for seed, X in enumerate([_data(0), _data(1, scale=1.0), np.vstack([R * np.eye(P)[:1], _data(2)[1:]])]):
            best = max(best, search(second_moment(R), dist, X, R, rng=rng)[0])
        _SM_CACHE[key] = best
    return _SM_CACHE[key]


@pytest.mark.parametrize("R", [1.0, 2.0])
@pytest.mark.parametrize("sensitivity", ["tight", "loose"])
@pytest.mark.parametrize("fn", SM_FUNCS)
@pytest.mark.parametrize("dist", [upper, frobenius], ids=["upper", "frobenius"])
def test_second_moment(fn, sensitivity, R, dist):
    sens = _sm_contract(fn, sensitivity, R, _data(0)).sensitivity
    found = _sm_search(R, dist)
    assert found <= sens * (1 + REL), f"{fn}(sensitivity={sensitivity!r}): change {found} > sensitivity {sens}"
    # not idle: e1 -> e2 at the bound reaches sqrt 2 R^2 / n, the tight value, in both weightings
    assert found >= math.sqrt(2) * R ** 2 / N * (1 - 1e-9)
    if sensitivity == "tight": assert found == pytest.approx(sens, rel=1e-9)


@pytest.mark.parametrize("fn", SM_FUNCS)
def test_second_moment_noise_shape(fn):
    """The default noise is the Gaussian mechanism on the Frobenius-weighted vector (a_ii, sqrt 2 a_ij), whose change is
    bounded above ("frobenius"): sd sigma on the diagonal, sigma / sqrt 2 off it. The paper's "upper" noise matches the
    "upper" weighting: sd sigma everywhere. Both at the same sigma (the two sups are equal)."""
    from dppca_nb.privacy.mechanisms import NOISE_SHAPES
    c = _sm_contract(fn, "tight", 1.0, _data(0))
    up = _sm_contract(fn, "tight", 1.0, _data(0), noise_shape="upper")
    assert c.sensitivity_norm == NOISE_SHAPES["vecd"].norm and up.sensitivity_norm == NOISE_SHAPES["upper"].norm
    assert (up.sensitivity, up.noise_scale) == (c.sensitivity, c.noise_scale)
    assert NOISE_SHAPES["vecd"].offdiag == pytest.approx(1 / math.sqrt(2), rel=1e-15)
    assert _sm_search(1.0, frobenius) == pytest.approx(_sm_search(1.0, upper), rel=1e-9)


@pytest.mark.parametrize("R", [1.0, 2.0])
@pytest.mark.parametrize("fn", SM_FUNCS)
def test_second_moment_paper_is_below_the_change(fn, R):
    "sensitivity='paper' (R^2/n) is below the largest replace-one change found (sqrt 2 R^2/n): that is why it warns."
    sens = _sm_contract(fn, "paper", R, _data(0)).sensitivity
    found = _sm_search(R, upper)
    assert found > sens * 1.4, (found, sens)


def test_second_moment_paper_warns_and_certifies():
    "The weaker setting warns and states the epsilon it really certifies against the largest change found."
    from dppca_nb.privacy import mechanisms, releases
    with pytest.warns(core.PrivacyWarning):
        c = releases.gaussian_second_moment(_data(0), EPS, DLT, sensitivity_rule="paper", random_state=0,
                                            return_release=True).contract
    found = _sm_search(1.0, upper)
    eps_true = mechanisms.gaussian_epsilon(c.noise_scale, DLT, found)
    assert c.epsilon_certified >= eps_true * (1 - 1e-6) and c.epsilon_certified > EPS


# --- the local model: one user's report ut(x x^T) -------------------------------------------------------

def _report(X):
    "The statistic of a one-record data set: clip(x) clip(x)^T, x clipped to the unit ball (the randomizer's input)."
    x = clip_rows(X, 1.0)[0]
    return x.T @ x


@pytest.mark.parametrize("sensitivity", ["tight", "loose", "paper"])
def test_local_report(sensitivity):
    from dppca_nb.algorithms import local
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sens = local.local_second_moment(_data(0), EPS, DLT, sensitivity_rule=sensitivity, random_state=0,
                                         return_release=True).contract.sensitivity
    rng = np.random.default_rng(2)
    found = 0.0
    for base in (np.eye(P)[:1], _unit(rng.standard_normal((1, P))), 0.3 * _unit(rng.standard_normal((1, P)))):
        found = max(found, search(_report, upper, base, 1.0, rng=rng, rows=[0])[0])
    assert found >= math.sqrt(2) * (1 - 1e-9)                         # e1 vs e2 reaches sqrt 2
    if sensitivity == "paper": assert found > sens * 1.4              # documented: below the true sqrt 2; it warns
    else: assert found <= sens * (1 + REL), (found, sens)


@pytest.mark.parametrize("R", [1.0, 2.0])
def test_local_report_radius(R):
    "With a bound R a report's x x^T (x clipped to R) moves by at most the contract's sqrt 2 R^2, in the Frobenius norm of the default shape."
    from dppca_nb.algorithms import local
    c = local.plan_local_second_moment(N, P, EPS, DLT, radius=R).contract
    assert c.sensitivity_norm.startswith("Frobenius")
    stat = lambda X: (lambda x: x.T @ x)(clip_rows(X, R)[0])
    rng = np.random.default_rng(3)
    found = max(search(stat, frobenius, b, R, rng=rng, rows=[0])[0]
                for b in (R * np.eye(P)[:1], R * _unit(rng.standard_normal((1, P)))))
    assert found <= c.sensitivity * (1 + REL), (found, c.sensitivity)
    assert found >= math.sqrt(2) * R ** 2 * (1 - 1e-9)                # Re1 vs Re2 reaches it


# --- the private mean -------------------------------------------------------------------------------------

def _mean(R):
    return lambda X: clip_rows(X, R)[0].mean(axis=0)


@pytest.mark.parametrize("R", [1.0, 3.0])
@pytest.mark.parametrize("case", ["central gaussian", "central snapping", "local"])
def test_private_mean(case, R):
    from dppca_nb.privacy.centering import private_mean
    delta = 0.0 if case == "central snapping" else DLT
    model = "local" if case == "local" else "central"
    X = _data(0)
    c = private_mean(X, EPS, delta, radius=R, model=model, random_state=0, return_release=True).contract
    sens, dist = c.sensitivity, {"l2": l2, "l1": l1}[c.sensitivity_norm]
    rng = np.random.default_rng(3)
    if model == "local":     # one user's report: the clipped record itself
        bases, n, want = [R * np.eye(P)[:1], R * np.ones((1, P)) / math.sqrt(P)], 1, 2 * R
    else:
        Xs = X.copy(); Xs[0] = R * np.ones(P) / math.sqrt(P)
        bases, n = [X, Xs], N
        want = 2 * R / N * (math.sqrt(P) if dist is l1 else 1.0)
    found = max(search(_mean(R), dist, b, R, rng=rng, rows=[0])[0] for b in bases)
    assert found <= sens * (1 + REL), (found, sens)
    assert found >= want * (1 - 1e-9)                                 # x -> -x at the bound: 2R/n (l2), 2R sqrt p/n (l1)
    assert sens == pytest.approx(want, rel=1e-12)


# --- Kendall's tau ----------------------------------------------------------------------------------------

KENDALL = [("spherical", None), ("winsorized", 0.5), ("winsorized", None)]


@pytest.mark.parametrize("sensitivity_rule", ["tight", "paper"])
@pytest.mark.parametrize("transform,radius", KENDALL, ids=["spherical", "winsorized r=0.5", "winsorized r=sqrt p"])
def test_kendall(transform, radius, sensitivity_rule):
    from dppca_nb.algorithms import kendall
    from dppca_nb.algorithms import robust
    X = _data(0)
    sens = robust.plan_noisy_kendall(N, P, None, EPS, DLT, pair_transform=transform, winsorization_radius=radius,
                                     sensitivity_rule=sensitivity_rule).contract.sensitivity   # the contract's
    c2 = 1.0 if transform == "spherical" else (P if radius is None else radius ** 2)
    stat = lambda Z: kendall.kendall_tau(Z, transform, winsorization_radius=radius)   # noise-free, the package's own statistic
    rng = np.random.default_rng(4)
    # worst case: every other row at one point, the replaced row far from it, turned by 90 degrees: each of the
    # n - 1 pair terms g g^T (||g||^2 = c^2) moves by sqrt 2 c^2 in Frobenius norm, times 2/(n(n-1))
    L = 10.0 * math.sqrt(c2)
    Z = np.zeros((N, P)); Z[0] = L * np.eye(P)[0]
    found = search(stat, frobenius, Z, L, rng=rng, rows=[0], n_random=20, hill=10, extra=[L * np.eye(P)[1]])[0]
    found = max(found, search(stat, frobenius, X, 1.0, rng=rng, n_random=200, hill=40, extra=[3 * np.eye(P)[1]])[0])
    assert found <= sens * (1 + REL), (found, sens)
    assert found >= 2 * math.sqrt(2) * c2 / N * (1 - 1e-6)           # the tight value is reached
    tight = robust.kendall_sensitivity("tight", n=N, bound=c2)
    assert tight == pytest.approx(2 * math.sqrt(2) * c2 / N, rel=1e-12)


# --- NSGGD: the averaged geodesic gradient ----------------------------------------------------------------

def _nsggd_gradient(V):
    "The noise-free gradient nsggd perturbs, on a batch B of rows normalised as nsggd does (`baselines._lad_gradient`)."
    from dppca_nb.algorithms.baselines import _lad_gradient
    return lambda B: _lad_gradient(core.normalize_rows(B), V)


@pytest.mark.parametrize("b", [N, 10], ids=["full batch", "minibatch 10"])
def test_nsggd_gradient(b):
    from dppca_nb.algorithms import baselines
    from dppca_nb.core.linalg import random_orthonormal
    X = _data(0)
    n_iter = 2
    c = baselines.nsggd(X, K, EPS, DLT, n_iter=n_iter, batch_size=b, random_state=0, return_release=True).contract
    assert c.sensitivity_norm == f"Frobenius, the {n_iter} averaged gradients stacked"
    sens = c.sensitivity / math.sqrt(n_iter)      # one step's: the contract states the n_iter steps' gradients stacked
    rng = np.random.default_rng(5)
    found = 0.0
    for t in range(3):                                   # the iterate V is arbitrary: the bound must hold for all
        V = random_orthonormal(P, K, rng)
        Bt = _data(10 + t, n=b)                          # the batch (a replace-one neighbour changes one of its rows)
        u = _unit((np.eye(P) - V @ V.T) @ rng.standard_normal(P))
        Bt[0] = V[:, 0] + 1e-6 * u                       # x almost in span V ...
        worst = -V[:, 0] + 1e-6 * u                      # ... and its reflection: the term u (V'x)' flips sign
        found = max(found, search(_nsggd_gradient(V), frobenius, Bt, 1.0, rng=rng, rows=[0], n_random=70, hill=20,
                                  extra=[worst])[0])
    assert found <= sens * (1 + REL), (found, sens)
    assert found >= 2 / b * (1 - 1e-6)
    assert sens == pytest.approx(2 / b, rel=1e-12)


# --- pure DP: the eigenvalues of the sum and the exponential mechanism's utility ------------------------------

def _moment_sum(R):
    def stat(X):
        Xc = clip_rows(X, R)[0]
        return Xc.T @ Xc
    return stat


def _eigenvalues(R):
    return lambda X: np.linalg.eigvalsh(_moment_sum(R)(X))[::-1]


def _spectral(A, B):
    "max over unit u of |u'(A - B)u|: the largest change of the Bingham utility u'Cu."
    return float(np.abs(np.linalg.eigvalsh(np.asarray(A) - np.asarray(B))).max())


@pytest.mark.parametrize("sensitivity_rule", ["tight", "paper"])
@pytest.mark.parametrize("R", [1.0, 2.0])
def test_pure_dp(R, sensitivity_rule):
    from dppca_nb.algorithms import pure
    X = _data(0)
    c = pure.plan_pure_dp_pca(N, P, K, EPS, sensitivity_rule=sensitivity_rule, radius=R).contract
    assert pure.pure_dp_pca(X, K, EPS, sensitivity_rule=sensitivity_rule, radius=R, random_state=0,
                            return_release=True).contract == c
    rng = np.random.default_rng(6)
    # axis data: counts 10, 5, 3, ... of R e_j; moving one row from e_1 to e_2 moves two eigenvalues by R^2 each
    A = R * np.repeat(np.eye(P), [10, 5, 3, 2, 1], axis=0)
    A = np.vstack([A, _data(7, n=N - len(A), scale=0.01)])
    found_eig = max(search(_eigenvalues(R), l1, Z, R, rng=rng, n_random=200, hill=40)[0] for Z in (X, A))
    assert found_eig <= c.part("eigenvalues").sensitivity * (1 + REL)
    assert found_eig >= 2 * R ** 2 * (1 - 1e-6)          # the small rows tilt the axes by ~1e-4: 2nd order
    found_u = max(search(_moment_sum(R), _spectral, Z, R, rng=rng, n_random=200, hill=40)[0] for Z in (X, A))
    assert found_u <= c.part("eigenvectors").sensitivity * (1 + REL)
    assert found_u >= R ** 2 * (1 - 1e-9)


def _ky_fan(k):
    "max over k-frames V of |tr V'(A - B)V|: the larger of the sums of the k largest positive eigenvalues of A - B and B - A."
    def dist(A, B):
        w = np.linalg.eigvalsh(np.asarray(A) - np.asarray(B))
        return float(max(np.clip(w[::-1][:k], 0, None).sum(), np.clip(-w[:k], 0, None).sum()))
    return dist


@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("R", [1.0, 2.0])
def test_pure_dp_subspace(R, k):
    "The joint exponential mechanism's utility tr(V'CV) moves by at most R^2 for every k-frame, and R^2 is reached."
    from dppca_nb.algorithms import pure
    X = _data(0)
    c = pure.pure_dp_subspace(X, k, EPS, radius=R, random_state=0, return_release=True).contract
    assert c.notes[0] == f"exponent eta = epsilon / (2 R^2) = {EPS / (2 * c.sensitivity):.6g}"   # replace-one: eps = 2 eta R^2
    rng = np.random.default_rng(8)
    A = R * np.repeat(np.eye(P), [10, 5, 3, 2, 1], axis=0)
    A = np.vstack([A, _data(7, n=N - len(A), scale=0.01)])
    found = max(search(_moment_sum(R), _ky_fan(k), Z, R, rng=rng, n_random=200, hill=40)[0] for Z in (X, A))
    assert found <= c.sensitivity * (1 + REL)
    assert found >= R ** 2 * (1 - 1e-9)


# --- smooth sensitivity: the smooth bound dominates the change of the top-k frame ---------------------------

SMOOTH = [(200, 5, 1, 0.3), (60, 4, 2, 0.05), (40, 3, 1, 0.02)]


@pytest.mark.parametrize("delta", [DLT, 0.0], ids=["gaussian l2", "cauchy l1"])
@pytest.mark.parametrize("case", SMOOTH + ["flip"], ids=[f"n{c[0]} p{c[1]} k{c[2]} gap{c[3]}" for c in SMOOTH] + ["flip"])
def test_smooth_bound(case, delta):
    from dppca_nb.algorithms import smooth
    from dppca_nb.data.datasets import spherical_spike
    if case == "flip":
        X, _ = smooth.flip_example(20, p=3); k = 1
    else:
        n, p, k, gap = case
        X, _ = spherical_spike(n, p, k, gap, random_state=n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = smooth.smooth_sensitivity_pca(X, k, EPS, delta, random_state=0, return_release=True)
        par = smooth.smooth_sensitivity_parameters(EPS, delta, X.shape[1], k)
    norm = r.contract.sensitivity_norm
    assert norm == par["norm"] and r.contract.noise_scale is None         # the scale is a function of the data
    bound = r.diagnostics["sensitivity"]                 # the smooth bound S_beta(X) the noise is scaled to (curator-only)
    assert bound == pytest.approx(smooth.smooth_sensitivity_bound(X, k, par["beta"], norm), rel=1e-9)
    rng = np.random.default_rng(8)
    U0 = smooth.second_moment_pca(X, k)
    dist = lambda U, V: smooth.aligned_distance(U, V, norm)
    found, (i, y) = search(lambda Z: smooth.second_moment_pca(Z, k), dist, X, 1.0, rng=rng, rows=[0, 1], n_random=60,
                           hill=20, extra=[])
    nb = smooth.candidate_neighbours(X, k, random_state=9)
    found = max(found, max(dist(U0, smooth.second_moment_pca(smooth.replace_row(X, j, z), k)) for j, z, _ in nb))
    assert found <= bound + 1e-12, (found, bound)
    assert found <= smooth.local_sensitivity_bound(X, k, norm) + 1e-12
    if case == "flip":                                   # not idle: e_1 -> e_2 flips the top eigenvector
        assert found >= (math.sqrt(2) if norm == "l2" else 2.0) * (1 - 1e-9)   # ||e_1 - e_2|| in l2 and in l1


# --- adaptive noise (algorithms.adaptive): one step's clipped gradient mean, its private spread, the row clipping ---

def _adaptive_mean(W, C, tau, R):
    "The statistic one step perturbs: C + (1/b) sum_i clip_tau(x_i (W'x_i)' - C), rows clipped to R first."
    from dppca_nb.algorithms.adaptive import clipped_gradient_sum
    def stat(X):
        Xc = clip_rows(X, R)[0]
        return C + clipped_gradient_sum(Xc, W, C, tau)[0] / len(Xc)
    return stat


@pytest.mark.parametrize("R", [1.0, 2.0])
@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("tau_rel", [0.02, 0.4, 3.0], ids=["clipping", "partly", "none clipped"])
def test_adaptive_gradient(k, R, tau_rel):
    """The clipped mean moves by at most `gradient_sensitivity` = min(2 tau, c_k R^2)/b (c_1 = 1, c_k = sqrt 2) for any
    public iterate W and center C, and the search reaches it: 2 tau/b where the clipping binds, c_k R^2/b where not."""
    from dppca_nb.algorithms import adaptive
    from dppca_nb.core.linalg import random_orthonormal
    rng = np.random.default_rng(11)
    tau = tau_rel * R ** 2
    sens = adaptive.gradient_sensitivity(tau, R, N, k)
    found = 0.0
    for t in range(3):
        W = random_orthonormal(P, k, rng)
        C = rng.standard_normal((P, k)) * 0.02 * R ** 2                 # a public center near 0
        u = _unit((np.eye(P) - W @ W.T) @ rng.standard_normal(P))
        X = _data(20 + t, scale=0.3 * R)
        pair = ([R * (W[:, 0] + u) / math.sqrt(2), R * (W[:, 0] - u) / math.sqrt(2)] if k == 1
                else [R * W[:, 0], R * W[:, 1]])                          # the pairs that attain c_k R^2
        X[0] = pair[0]
        found = max(found, search(_adaptive_mean(W, C, tau, R), frobenius, X, R, rng=rng, rows=[0], n_random=100,
                                  hill=30, extra=[pair[1], R * u, -pair[0]])[0])
    assert found <= sens * (1 + REL), (found, sens)
    want = 2 * tau / N if 2 * tau < (1 if k == 1 else math.sqrt(2)) * R ** 2 else sens
    assert found >= 0.7 * want, (found, want)                          # not idle
    release = adaptive.release_gradient(np.zeros((P, k)), np.zeros((P, k)), N, tau, R, 0.25, np.random.default_rng(0))
    assert release.shape == (P, k)                                      # its noise sd is sens / mu (tested in the notebook)


def _spread_counts(W, C, R, bounds):
    "The counts the private spread's exponential mechanism reads: how many of the rows' window points lie below each grid point."
    from dppca_nb.algorithms.adaptive import deviation_norms, spread_histogram
    def stat(X):
        Xc = clip_rows(X, R)[0]
        h = spread_histogram(deviation_norms(Xc, W, C), bounds)
        return np.concatenate([[0], np.cumsum(h[:-1])])
    return stat


def linf(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max())


@pytest.mark.parametrize("k", [1, 2])
def test_adaptive_spread_counts(k):
    """Replacing one row moves every count below a grid point by at most m (each row adds m window points: the sensitivity
    the contract states and the exponent epsilon / (2 m) uses), and by m somewhere."""
    from dppca_nb.algorithms import adaptive
    from dppca_nb.core.linalg import random_orthonormal
    m = adaptive.SPREAD_WINDOW[0]
    c = adaptive.plan_adaptive_dp_kpca(N, P, k, EPS, DLT, mode="adaptive").contract.part("spread")   # at n = 40 "auto" plans Analyze Gauss
    assert c.sensitivity == float(m) and c.measure == "pure"
    rng = np.random.default_rng(12)
    bounds = adaptive.spread_bounds(1.0, 1e-6)
    found = 0.0
    for t in range(3):
        W, C = random_orthonormal(P, k, rng), rng.standard_normal((P, k)) * 0.05
        found = max(found, search(_spread_counts(W, C, 1.0, bounds), linf, _data(30 + t), 1.0, rng=rng, n_random=80,
                                  hill=20)[0])
    assert found == float(m)


def test_adaptive_rows_clipped():
    "Rows far outside the ball enter as rows at the bound: a row 100 R e_1 and R e_1 give the same release."
    from dppca_nb.algorithms import adaptive
    X = _data(40)
    Y, Z = X.copy(), X.copy()
    Y[0], Z[0] = 100.0 * np.eye(P)[0], np.eye(P)[0]
    a = adaptive.adaptive_dp_kpca(Y, K, EPS, DLT, n_steps=2, mode="adaptive", random_state=3, return_release=True)
    b = adaptive.adaptive_dp_kpca(Z, K, EPS, DLT, n_steps=2, mode="adaptive", random_state=3, return_release=True)
    assert a.extras["mode"] == "adaptive"
    np.testing.assert_allclose(a.value, b.value, atol=1e-12)
    assert a.diagnostics["n_clipped"] == b.diagnostics["n_clipped"] + 1


# --- every registered plan: the noise scale its contract states is the one its budget and sensitivity call for ---

def _noise_cases():
    from _helpers import ALGORITHMS, variants
    return [(a, v) for a in ALGORITHMS for v in variants(a, N, P, K)]


NOISE_CASES = _noise_cases()


def _contracts(c, name="whole"):
    "(name, contract) of a contract and every part in it, depth first."
    yield name, c
    for a, b in c.parts: yield from _contracts(b, f"{name}.{a}")


@pytest.mark.parametrize("case", NOISE_CASES, ids=[f"{a.key}{v or ''}" for a, v in NOISE_CASES])
def test_noise_scale_matches_the_contract(case):
    """Each (part of a) contract that states a Gaussian or Laplace noise scale and the sensitivity it is calibrated
    to: the scale is what the stated calibration gives at the part's (epsilon, delta) and that sensitivity (the tight,
    the paper's or the loose one: the certified epsilon against the true sensitivity is tested above)."""
    from _helpers import plan
    from dppca_nb.privacy.mechanisms import gaussian_sigma
    alg, opts = case
    checked, gaussian = [], []
    for name, c in _contracts(plan(alg, N, P, K, **opts).contract):
        if c.noise == "gaussian" and c.noise_scale is not None: gaussian.append(name)
        if c.noise_scale is None or c.sensitivity is None: continue
        if c.noise == "gaussian" and c.calibration in ("analytic", "classic"):
            assert c.noise_scale == pytest.approx(gaussian_sigma(c.epsilon, c.delta, c.sensitivity, c.calibration),
                                                  rel=1e-9), name
            checked.append(name)
        elif c.noise in ("laplace", "laplace (snapping)"):
            assert c.noise_scale >= c.sensitivity / c.epsilon * (1 - 1e-12), name    # snapping needs a little more
            checked.append(name)
    assert set(gaussian) <= set(checked) or any(
        c.calibration not in ("analytic", "classic") for _, c in _contracts(plan(alg, N, P, K, **opts).contract)), \
        f"Gaussian parts with a scale left unchecked: {sorted(set(gaussian) - set(checked))}"


@pytest.mark.parametrize("fn", ["gaussian_second_moment", *(k for k, a in SM_ALGORITHMS.items() if a.output == "covariance")])
def test_noise_scale_is_drawn(fn):
    """The noise drawn has the contract's scale: the released matrix minus the exact second moment of the clipped rows,
    over 8 seeds at p = 12, has sd sigma on the diagonal (96 draws: the sample sd is within 4 x 7% of sigma) and
    sigma / sqrt 2 off it (528 draws: 4 x 3%), for the default 'vecd' shape. A thresholding release zeroes entries
    below its threshold: only its unthresholded noisy matrix (the released extras' "noisy") is read."""
    from dppca_nb.privacy import releases
    p = 12
    X = np.random.default_rng(3).normal(size=(60, p)) * 0.2
    Xc = clip_rows(X, 1.0)[0]
    S = Xc.T @ Xc / len(X)
    D, O = [], []
    for seed in range(8):
        r = (releases.gaussian_second_moment(X, EPS, DLT, random_state=seed, return_release=True)
             if fn == "gaussian_second_moment" else SM_ALGORITHMS[fn].run(X, None, EPS, DLT, random_state=seed))
        M = np.asarray(r.extras.get("noisy", r.value)) - S
        D += list(np.diag(M)); O += list(M[np.triu_indices(p, 1)])
        sigma = r.contract.noise_scale
    assert np.std(D) == pytest.approx(sigma, rel=4 * 0.07)
    assert np.std(O) == pytest.approx(sigma / math.sqrt(2), rel=4 * 0.03)


# --- the picture releases: every noisy part's statistic, at fixed public intermediate values ------------------------
# Read from the pictures' own table (dppca_nb.algorithms.pictures.picture_releases()): each entry gives, for each part
# that adds Gaussian or Laplace noise, the noise-free statistic at fixed public values of the privately released
# intermediates (the radius, the caps, the quantiles, the frame) and a pair of neighbours at which the change equals the
# stated sensitivity. The private radii, quantiles and the frame are the package's exponential mechanisms (sensitivity
# 1 in rank, tested with the centring chapter's releases).

def _picture_parts():
    from dppca_nb.algorithms.pictures import picture_releases
    out = []
    for e in picture_releases().values():
        for v in e.variants:
            for part in e.statistics(N, P, K, e.inputs(N, P, K), **v):
                out.append((e, v, part))
    return out


PICTURE_PARTS = _picture_parts()


def _find_part(c, name):
    for a, b in c.parts:
        if a == name: return b
        try: return _find_part(b, name)
        except KeyError: pass
    raise KeyError(name)


def _picture_part_id(case):
    e, v, part = case
    return f"{e.key}{v or ''}.{part}"


def test_picture_parts_are_found():
    assert {p for _, _, p in PICTURE_PARTS} == {"means", "steps", "histogram"}


@pytest.mark.parametrize("case", PICTURE_PARTS, ids=[_picture_part_id(c) for c in PICTURE_PARTS])
def test_picture_sensitivity(case):
    "The stated sensitivity is attained by the entry's pair, and no change found by the search exceeds it."
    e, v, part = case
    inputs = e.inputs(N, P, K)
    st = e.statistics(N, P, K, inputs, **v)[part]
    sens = _find_part(e.planner(N, P, K, EPS, DLT, **v).contract, part).sensitivity
    dist = {"l2": l2, "l1": l1}[st.norm]
    a, b = st.attained
    assert dist(st.compute(a), st.compute(b)) == pytest.approx(sens, rel=1e-9)        # tight
    rng = np.random.default_rng(13)
    found = max(search(st.compute, dist, X, 1.0, rng=rng, rows=[0, 1, N - 1], n_random=120, hill=30)[0]
                for X in (a, _data(0, scale=0.3)))
    assert found <= sens * (1 + REL), (found, sens)


def _picture_plans():
    from dppca_nb.algorithms.pictures import picture_releases
    return [(e, v) for e in picture_releases().values() for v in e.variants]


@pytest.mark.parametrize("case", _picture_plans(), ids=[f"{e.key}{v or ''}" for e, v in _picture_plans()])
def test_picture_noise_scale_matches_the_contract(case):
    "Each Gaussian part's scale is the analytic calibration at its budget and sensitivity; each Laplace part's is sensitivity / epsilon."
    from dppca_nb.privacy.mechanisms import gaussian_sigma
    e, v = case
    seen = 0
    for name, c in _contracts(e.planner(N, P, K, EPS, DLT, **v).contract):
        if c.noise == "gaussian":
            assert c.calibration == "analytic" and c.noise_scale == pytest.approx(
                gaussian_sigma(c.epsilon, c.delta, c.sensitivity), rel=1e-12), name
            seen += 1
        elif c.noise == "laplace":
            assert c.noise_scale == pytest.approx(c.sensitivity / c.epsilon, rel=1e-12), name
            seen += 1
    assert seen == 1
