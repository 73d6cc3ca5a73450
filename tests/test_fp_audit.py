"""Floating-point audit of every number the package releases under a pure claim: the support of the outputs on
neighbouring inputs, bit for bit (`privacy.audit.support_audit`). A pure release must recur on a finite public set
that both neighbours share; a continuous draw between data-dependent endpoints does not (and, checked exactly for a
continuous private radius, some of its outputs on one neighbour are impossible on the other); and, where the claimed
law can be written down, the frequencies against it (`quantile_law`): a release on the right grid with the wrong
weights, or no randomness at all, is caught by the audit itself."""
import math

import numpy as np
import pytest

from dppca_nb.algorithms.robust import plan_winsorization_radius
from dppca_nb.privacy.centering import (norm_histogram, plan_private_radius, private_mean, private_radius_from_histogram,
                                        radius_contract, radius_grid, radius_grid_value)
from dppca_nb.privacy.audit import (eigenvalue_neighbours, law_p_value, output_bits, quantile_law, support_audit,
                                   support_samples)
from dppca_nb.privacy.centering import _exact_exponential_index, _radius_scores, radius_cell_point
from dppca_nb.privacy.mechanisms import laplace_noise

EPS = 1.0
D_R, D_R2 = (0.6, 1.0, 1.5), (0.61, 1.0, 1.5)         # the pair norms of the example: one moved by 1.7%
BOUNDS = (0.5, 2.0)                                   # a narrow public range: 90 grid points, so 600 runs recur
GRID = {radius_grid_value(j, BOUNDS) for j in range(radius_grid(BOUNDS)[2] + 1)}


def on_grid(v):
    return v[0] in GRID


def continuous_radius(norms, eps, bounds, rng, q=0.5):
    "A continuous release (planted): interval j between sorted log-norms by the exponential mechanism, then exp(uniform) on it."
    lo, hi = bounds
    z = np.sort(np.log(np.clip(np.asarray(norms, dtype=float), lo, hi)))
    edges = np.concatenate([[math.log(lo)], z, [math.log(hi)]])
    logw = np.log(np.diff(edges)) - eps / 2 * np.abs(np.arange(z.size + 1) - q * z.size)
    j = int(np.argmax(logw + rng.gumbel(size=logw.size)))
    return float(math.exp(rng.uniform(edges[j], edges[j + 1])))


def continuous_radius_reachable(y, norms, bounds):
    "Exactly: can the continuous release on `norms` output the double y (exp(a + (b - a) k 2^-53) == y for some k)?"
    lo, hi = bounds
    edges = [math.log(lo)] + sorted(math.log(min(max(v, lo), hi)) for v in norms) + [math.log(hi)]
    for a, b in zip(edges[:-1], edges[1:]):
        def f(k): return math.exp(a + (b - a) * (k * 2.0 ** -53))
        if not f(0) <= y <= f(2 ** 53 - 1): continue
        k0, k1 = 0, 2 ** 53 - 1
        while k0 < k1:                                  # the first k with f(k) >= y (f is non-decreasing)
            mid = (k0 + k1) // 2
            if f(mid) < y: k0 = mid + 1
            else: k1 = mid
        if any(f(k) == y for k in range(max(0, k0 - 2), min(2 ** 53, k0 + 3))): return True
    return False


def test_uniform_draws_really_are_a_plus_range_times_k():
    # the white-box model of numpy's uniform used below: a + (b - a) * random(), random() = k 2^-53
    r1, r2 = np.random.default_rng(5), np.random.default_rng(5)
    assert np.array_equal(r1.uniform(-3.1, 0.7, 1000), -3.1 + (0.7 - (-3.1)) * r2.random(1000))


def test_continuous_radius_has_outputs_impossible_on_the_neighbour():
    # numpy: uniform(a, b) = a + (b - a) k 2^-53; which doubles come out depends on the data's log-norms a, b. On the
    # example about 3.5% of the outputs on D cannot occur on D' (measured 3.5-3.7% with 4000 draws): 800 draws give
    # about 28 (binomial sd 5); at least 10 is a 3.5 sd margin
    rng = np.random.default_rng(0)
    ys = [continuous_radius(D_R, EPS, (1e-3, 1e3), rng) for _ in range(800)]
    assert all(continuous_radius_reachable(y, D_R, (1e-3, 1e3)) for y in ys[:50])   # the check finds the draws
    impossible = sum(not continuous_radius_reachable(y, D_R2, (1e-3, 1e3)) for y in ys)
    assert 10 <= impossible <= 60, impossible


def test_support_statistic():
    rng = np.random.default_rng(0)
    vals = [output_bits(v) for v in (0.0, 0.25, 0.5)]
    ok = support_samples(list(rng.choice(vals, 500)), list(rng.choice(vals, 500)), epsilon=EPS)
    assert not ok.flagged and ok.unseen == 0
    one_sided = support_samples([vals[0]] * 60 + [vals[1]] * 440, [vals[1]] * 500, epsilon=EPS)
    assert one_sided.flagged and one_sided.one_sided == 1 and one_sided.epsilon_lower > 2
    cont = support_samples([output_bits(x) for x in rng.random(300)], [output_bits(x) for x in rng.random(300)],
                           epsilon=EPS)
    assert cont.flagged and cont.unseen == 1.0


def _radius(z, rng):
    return private_radius_from_histogram(norm_histogram(z, BOUNDS), EPS, bounds=BOUNDS, random_state=rng).value


def _former(z, rng):
    return continuous_radius(z, EPS, BOUNDS, rng)


@pytest.mark.parametrize("mech, planted", [(_radius, False), (_former, True)], ids=["grid", "continuous exp(uniform)"])
def test_private_radius_support(mech, planted):
    # about 7 runs per grid point (at least 4 at the least likely): a value seen once is rare, unseen ~ 0.01 < 0.05
    res = support_audit(mech, D_R, D_R2, epsilon=EPS, n_trials=200 if planted else 600, public=on_grid, random_state=1)
    assert res.flagged == planted, res
    if planted: assert res.unseen > 0.99 and res.outside == sum(res.n_trials)   # never recurs, never on the grid
    else: assert res.unseen <= 0.05 and res.outside == 0 and res.epsilon_lower < EPS


def test_estimator_radius_support():
    # radius_ (and mean_radius_) = radius_factor x a grid point; x 2 is exact, so the released set is twice the grid
    X = np.array([[0.6, 0.0], [0.0, 1.0], [1.2, 0.9]]); X2 = X.copy(); X2[0] = [0.61, 0.0]
    plan = plan_private_radius(3, 2, EPS, bounds=BOUNDS)                 # the estimators' radius: factor 2, centered rows
    c = plan.contract
    assert c == radius_contract(3, 2, EPS, bounds=BOUNDS)
    assert "a function of j and the public bounds only" in c.notes[1] and "2 x exp(ln 0.5" in c.notes[1]
    res = support_audit(lambda Z, rng: plan.release(Z, rng, center=np.array([0.1, 0.2])).value, X, X2,
                        epsilon=EPS, n_trials=600, public=lambda v: v[0] / 2 in GRID, random_state=2)
    assert not res.flagged and res.outside == 0, res


def test_g_dppca_radius_support():
    X = np.random.default_rng(5).normal(size=(6, 2)); X2 = X.copy(); X2[3] *= 1.02
    plan = plan_winsorization_radius(6, 2, EPS, bounds=BOUNDS)          # g-DPPCA's private winsorization radius
    res = support_audit(lambda Z, rng: plan.release(Z, rng).value, X, X2, epsilon=EPS, n_trials=600, public=on_grid,
                        random_state=3)
    assert not res.flagged and res.outside == 0, res


def test_private_mean_support():
    # one column, rows 0.5, 0.5 against 0.5, -0.5 (sensitivity 2R sqrt(p)/n = 1): snapped on a grid, or textbook Laplace
    X, X2 = np.array([[0.5], [0.5]]), np.array([[0.5], [-0.5]])
    c = private_mean(X, EPS, 0.0, random_state=0, return_release=True).contract
    B = max(1.0, 4 * c.sensitivity / c.epsilon)                            # the clamp the contract states (R = 1)
    assert f"clamped to [-{B:g}, {B:g}]" in c.notes[0]
    def lattice(v): return bool(np.all((np.mod(v, c.grid) == 0) | (np.abs(v) == B)))
    ok = support_audit(lambda Z, rng: private_mean(Z, EPS, 0.0, random_state=rng), X, X2, epsilon=EPS,
                       n_trials=400, public=lattice, random_state=4)          # about 9 values: they recur
    bug = support_audit(lambda Z, rng: Z.mean(0) + laplace_noise(c.noise_scale, 1, rng), X, X2, epsilon=EPS,
                        n_trials=100, public=lattice, random_state=4)
    assert not ok.flagged and ok.outside == 0, ok
    assert bug.flagged and bug.unseen > 0.99, bug


def test_pure_eigenvalues_support():
    from dppca_nb.algorithms.pure import pure_dp_pca, plan_pure_dp_pca
    D, D2 = eigenvalue_neighbours()
    ev = {id(D): np.linalg.eigvalsh(D.T @ D)[::-1], id(D2): np.linalg.eigvalsh(D2.T @ D2)[::-1]}
    eig = plan_pure_dp_pca(2, 2, 1, EPS, eigenvalue_share=0.9).contract.part("eigenvalues")
    B = max(2.0, 4 / eig.epsilon)                                          # the clamp max(n R^2, 2 * 2R^2 / eps_0)
    assert eig.notes == (f"clamped to [-{B:g}, {B:g}]",)
    def lattice(v): return bool(np.all((np.mod(v, eig.grid) == 0) | (np.abs(v) == B)))
    # the release's extras hold the eigenvalues of sum x x^T divided by n = 2 (exact): times 2, the snapped values
    ok = support_audit(lambda Z, rng: 2 * pure_dp_pca(Z, 1, EPS, eigenvalue_share=0.9, random_state=rng,
                                                      return_release=True).extras["eigenvalues"],
                       D, D2, epsilon=EPS, n_trials=400, public=lattice, random_state=5)   # pairs of 5 values
    bug = support_audit(lambda Z, rng: ev[id(Z)] + laplace_noise(eig.noise_scale, 2, rng), D, D2, epsilon=EPS,
                        n_trials=100, public=lattice, random_state=5)
    assert not ok.flagged and ok.outside == 0, ok
    assert bug.flagged and bug.unseen > 0.99, bug


# --- the law: planted bugs on the right grid ------------------------------------------------------------------------

D9 = tuple(np.geomspace(0.55, 1.9, 9))
D9p = D9[:-1] + (0.5,)                                # the largest norm moved to the bottom of the range


def _planted_radius(exponent):
    "The grid release with weights exp(-exponent D_j) (the claim: exponent eps / 2), or the best cell (exponent None)."
    K = radius_grid(BOUNDS)[2]
    def release(z, rng):
        D, _ = _radius_scores(norm_histogram(z, BOUNDS), 0.5, cells=True)
        i = int(np.argmin(D)) if exponent is None else _exact_exponential_index(D, exponent, rng)
        return radius_grid_value(radius_cell_point(i, K), BOUNDS)
    return release


def _law(z):
    return quantile_law(z, EPS, bounds=BOUNDS)


@pytest.mark.parametrize("exponent, planted", [(EPS / 2, False), (EPS, True), (4 * EPS, True), (None, True)],
                         ids=["eps/2 (the claim)", "2 eps", "8 eps", "deterministic"])
def test_private_radius_law(exponent, planted):
    """The support audit with the claimed law flags the 2 eps exponent, the 8 eps one and the deterministic choice, all
    on the grid and recurring (so the support checks alone pass them), and passes the claimed exponent and the release
    as shipped. Without the law, the 2 eps release passes: on this pair the claimed law spends about eps / 2, so the
    doubled one spends about eps and no count can show more."""
    res = support_audit(_planted_radius(exponent), D9, D9p, epsilon=EPS, n_trials=600, public=on_grid, law=_law,
                        random_state=11)
    assert res.flagged == planted and res.outside == 0 and res.unseen <= 0.05, res
    assert res.epsilon_law <= EPS
    if planted: assert res.p_value < 1e-6, res       # far below alpha: not a borderline call
    else: assert res.p_value > 0.05, res
    if exponent == EPS:
        blind = support_audit(_planted_radius(exponent), D9, D9p, epsilon=EPS, n_trials=600, public=on_grid, random_state=11)
        assert not blind.flagged, blind


def test_shipped_radius_fits_its_law():
    res = support_audit(lambda z, rng: _radius(z, rng), D9, D9p, epsilon=EPS, n_trials=600, public=on_grid, law=_law,
                        random_state=12)
    assert not res.flagged and res.p_value > 0.05, res
    # the law is a probability over the grid points, and the shipped estimators' radius (factor 2) fits its own
    law = _law(D9)
    assert abs(sum(law.values()) - 1) < 1e-12 and set(law) <= {output_bits(v) for v in GRID}
    X = np.array([[0.6, 0.0], [0.0, 1.0], [1.2, 0.9], [0.3, 0.2]]); X2 = X.copy(); X2[0] = [1.9, 0.0]
    c = np.array([0.1, 0.2])
    plan = plan_private_radius(4, 2, EPS, bounds=BOUNDS)
    res2 = support_audit(lambda Z, rng: plan.release(Z, rng, center=c).value, X, X2, epsilon=EPS, n_trials=600,
                         law=lambda Z: quantile_law(np.linalg.norm(Z - c, axis=1), EPS, bounds=BOUNDS, factor=2.0),
                         random_state=13)
    assert not res2.flagged and res2.p_value > 0.05, res2


def test_law_p_value():
    vals = [output_bits(v) for v in (0.0, 0.25, 0.5)]
    law = dict(zip(vals, (0.5, 0.3, 0.2)))
    rng = np.random.default_rng(0)
    draw = lambda p: [vals[i] for i in rng.choice(3, 800, p=p)]
    assert law_p_value(draw((0.5, 0.3, 0.2)), law) > 0.01 and law_p_value(draw(None), law) < 1e-6
    assert law_p_value([output_bits(0.75)], law) == 0.0                 # a value the law cannot produce
    with pytest.raises(ValueError, match="law_neighbour"):
        support_samples(vals, vals, epsilon=EPS, law=law)
