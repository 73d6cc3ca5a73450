"""The private radius and the private coarse location at the ends of their public ranges, and the radius on norms
that all lie in one cell.

The radius scores each cell j of the public grid by the distance from the target rank T to the counts at its ends,
[c_j, c_{j+1}] (0 when the quantile falls in the cell), and releases the cell's upper end (the end cells: the ends of
the range). Norms (or a coordinate's values) beyond the public range are counted in the end cell, which is drawn with
the probability its score gives, 1 / (1 + (cells - 1) e^{-epsilon gap / 2}), gap the score of every other cell; norms
all equal (or in one cell) draw their own cell the same way. The location keeps the scores max(b_j, a_j).
"""
import math
import warnings

import numpy as np
import pytest

from dppca_nb.privacy.centering import (PrivateLocationWarning, _coordinate_counts, _exact_exponential_index,
                                        _radius_scores, check_radius_bounds, location_bins, location_grid, location_table,
                                        log_norm_cells, norm_histogram,
                                        plan_centered, plan_private_location, plan_private_radius, private_location_rows,
                                        private_radius_from_histogram, radius_cell_point, radius_grid, radius_grid_value)
from dppca_nb.privacy.releases import plan_second_moment

B = (0.01, 0.5)
K = radius_grid(B)[2]


def _cell_scores_by_hand(norms, bounds, q):
    "max(0, c_j - T, T - c_{j+1}) from each norm's cell, c_j = #(cell < j), c_{j+1} = #(cell <= j): no cumulative sums."
    lo, hi = bounds
    cell = log_norm_cells(np.log(np.clip(norms, lo, hi)), radius_grid(bounds))
    T = round(2 * q * len(norms)) / 2
    d = np.array([max(0.0, np.sum(cell < j) - T, T - np.sum(cell <= j)) for j in range(radius_grid(bounds)[2] + 1)])
    return d - d.min()


def _end_share(norm, m, eps, draws, seed=0):
    rng = np.random.default_rng(seed)
    h = norm_histogram(np.full(m, norm), B)
    return [private_radius_from_histogram(h, eps, bounds=B, random_state=rng).diagnostics["cell"]
            for _ in range(draws)]


def _binomial_ok(hits, draws, prob, sds=5.0):
    return abs(hits - draws * prob) <= sds * math.sqrt(draws * prob * (1 - prob))


@pytest.mark.parametrize("norm, end", [(1.0, K), (1e-4, 0)])
def test_norms_beyond_an_end_draw_that_end_with_the_scores_probability(norm, end):
    # m = 20 norms, T = 10: the end cell scores 0, every other cell 10 (below the norms: [0, 0]; above: [20, 20]), so
    # P(end) = 1 / (1 + K e^{-epsilon 10 / 2}) = 0.372 at epsilon 1 (K = 251); 2000 draws, 5 binomial sd (108)
    D, m = _radius_scores(norm_histogram(np.full(20, norm), B), 0.5, cells=True)
    assert m == 20 and D[end] == 0 and set(np.delete(D, end)) == {10.0}
    p_end = 1 / (1 + K * math.exp(-1.0 * 10 / 2))
    got = _end_share(norm, 20, 1.0, 2000)
    assert _binomial_ok(sum(j == end for j in got), 2000, p_end), (sum(j == end for j in got), p_end)
    # the rest is uniform over the other K cells, about 5 draws each: above 20 has Poisson(5) probability < 1e-6
    others = np.bincount([j for j in got if j != end], minlength=K + 1)
    assert others[end] == 0 and others.max() <= 20
    # 200 norms at epsilon 1.5: any other point has probability <= K e^{-75} < 1e-30: the end at every seed
    big = _end_share(norm, 200, 1.5, 20)
    assert big == [end] * 20
    value = private_radius_from_histogram(norm_histogram(np.full(200, norm), B), 1.5, bounds=B, random_state=3).value
    assert value == radius_grid_value(end, B) and math.isclose(value, B[1] if end else B[0], rel_tol=1e-12)


def test_cell_scores_and_draws_inside_the_range():
    rng = np.random.default_rng(1)
    for m, q in ((50, 0.5), (1000, 0.5), (301, 0.9), (77, 0.1)):
        z = np.exp(rng.uniform(math.log(0.005), math.log(0.8), m))        # some beyond either end
        h = norm_histogram(z, B)
        D = _radius_scores(h, q, cells=True)[0]
        np.testing.assert_array_equal(D, _cell_scores_by_hand(z, B, q))
        assert D.min() == 0 and (D == 0).sum() <= 2                       # T is in one cell (two if on a shared end)
        for s in range(10):                                               # the cell drawn, released at its upper end
            r = private_radius_from_histogram(h, 0.7, quantile=q, bounds=B, random_state=s)
            i = _exact_exponential_index(D, 0.7 / 2, np.random.default_rng(s))
            assert (r.diagnostics["cell"], r.diagnostics["grid_point"]) == (i, radius_cell_point(i, K))
            assert r.value == radius_grid_value(radius_cell_point(i, K), B)
    assert [radius_cell_point(j, K) for j in (0, 1, 2, K - 1, K)] == [0, 2, 3, K, K]


@pytest.mark.parametrize("norm, bounds", [(1.0, None), (1e-3, None), (1.0, B), (1e-3, (1e-5, 1e2)), (0.3, (1e-5, 1e2))])
def test_equal_norms_release_their_own_cell(norm, bounds):
    # m equal norms in cell j: D_j = 0, every other cell T or m - T = m / 2 (q = 1/2, m even), so
    # P(another cell) = K e^{-eps m / 4} / (1 + K e^{-eps m / 4}); the cell's point is its upper end (the end cells: the
    # range's ends), within one cell (a factor e^{w} <= e^{1/64}) of the norm
    bnd = check_radius_bounds(bounds)
    k_, w = radius_grid(bnd)[2], radius_grid(bnd)[1]
    h = norm_histogram(np.full(2000, norm), bnd)
    rng = np.random.default_rng(0)
    vals = np.array([private_radius_from_histogram(h, 0.1, bounds=bnd, random_state=rng).value for _ in range(300)])
    assert k_ * math.exp(-0.1 * 2000 / 4) < 1e-18                         # 300 draws: all in the cell
    target = min(max(norm, bnd[0]), bnd[1])                               # the norm, clipped to the range
    assert (np.abs(np.log(vals / target)) <= w * (1 + 1e-9)).all(), np.unique(vals)
    # a borderline budget: m = 100 at epsilon 0.3, P(the cell) = 1 / (1 + K e^{-7.5}); 400 draws, 5 binomial sd
    h = norm_histogram(np.full(100, norm), bnd)
    cells = [private_radius_from_histogram(h, 0.3, bounds=bnd, random_state=rng).diagnostics["cell"] for _ in range(400)]
    own = int(np.flatnonzero(h)[0])
    p_own = 1 / (1 + k_ * math.exp(-0.3 * 50 / 2))
    assert _binomial_ok(sum(c == own for c in cells), 400, p_own), (sum(c == own for c in cells), p_own)


def test_norms_in_one_cell_and_the_point_scores_draw_anywhere():
    # distinct norms inside one cell [e^{t_j}, e^{t_{j+1}}): the same scores as equal norms, the cell's upper end
    a, w, k_ = radius_grid(B)
    j = 100
    z = np.exp(a + (j + np.random.default_rng(4).uniform(0.01, 0.99, 500)) * w)
    h = norm_histogram(z, B)
    assert h[j] == 500
    D = _radius_scores(h, 0.5, cells=True)[0]
    assert D[j] == 0 and set(np.delete(D, j)) == {250.0}
    vals = {private_radius_from_histogram(h, 0.2, bounds=B, random_state=s).value for s in range(50)}
    assert vals == {radius_grid_value(j + 1, B)} and z.max() < radius_grid_value(j + 1, B)   # above every norm
    # the point scores |c_j - T| (kept by callers that score points) are flat there: every point T
    assert set(_radius_scores(h, 0.5)[0]) == {0.0}


def test_plan_releases_factor_times_the_cell_point():
    X = np.random.default_rng(6).normal(size=(3000, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)                        # unit rows: every norm 1
    pl = plan_private_radius(3000, 5, 0.1, factor=2.0)
    bnd = check_radius_bounds(None, 5)
    w = radius_grid(bnd)[1]
    for s in range(20):
        r = pl.release(X, s)
        assert 0 <= math.log(r.value / 2.0) <= w * (1 + 1e-9), r.value  # 2 x the upper end of the norm's cell


def test_cell_scores_keep_sensitivity_one():
    # replace one norm by anything (beyond either end included): every log-probability moves by at most epsilon
    eps = 0.8
    rng = np.random.default_rng(2)
    for base in (np.exp(rng.uniform(math.log(0.003), math.log(2.0), 40)), np.full(40, 1.0), np.full(40, 1e-3),
                 np.r_[np.full(20, 1e-3), np.full(20, 3.0)], np.full(40, 0.05), np.full(41, 0.05),
                 np.r_[np.full(20, 0.05), np.full(20, 0.0505)]):
        for v in (1e-9, 0.0101, 0.05, 0.0502, 0.0505, 0.499, 0.5, 0.51, 1e6):
            other = base.copy(); other[int(rng.integers(len(base)))] = v
            lp = [-eps / 2 * D - np.log(np.exp(-eps / 2 * D).sum())
                  for D in (_radius_scores(norm_histogram(z, B), 0.5, cells=True)[0] for z in (base, other))]
            assert np.abs(lp[0] - lp[1]).max() <= eps + 1e-12


@pytest.mark.parametrize("value, end", [(10.0, -1), (-10.0, 0)])
def test_location_beyond_its_grid_draws_the_end(value, end):
    # n = 10 values beyond the grid on (1, 3): the end scores max(0, 0) = 0, every other point n = 10, so
    # P(end) = 1 / (1 + (G - 1) e^{-epsilon 10 / 2}) at epsilon 1; 1000 draws, 5 binomial sd
    g = location_grid(10, (1.0, 3.0))
    pl = plan_private_location(10, 1, 1.0, bounds=(1.0, 3.0))
    X = np.full((10, 1), value)
    p_end = 1 / (1 + (g.size - 1) * math.exp(-1.0 * 10 / 2))
    rng = np.random.default_rng(0)
    hits = sum(pl.release(X, rng).value[0] == g[end] for _ in range(1000))
    assert _binomial_ok(hits, 1000, p_end), (hits, p_end)
    assert plan_private_location(400, 1, 1.0, bounds=(1.0, 3.0)).release(np.full((400, 1), value), 0).value[0] == g[end]


def test_location_draws_unchanged_inside_its_grid():
    X = np.random.default_rng(3).standard_t(1, size=(3000, 3)) + np.array([5.0, -2.0, 0.3])
    pl = plan_private_location(3000, 3, 0.3)
    g = location_grid(3000)
    cnt = np.cumsum(_coordinate_counts(X, g), axis=2)[:, :, :g.size]
    d = np.maximum(cnt[:, 0], 3000 - cnt[:, 1])                        # the former utility, no end rule
    assert (cnt[:, 0, 0] < 3000 - cnt[:, 0, 0]).all() and (3000 - cnt[:, 1, -1] < cnt[:, 0, -1]).all()
    for s in range(5):
        rng = np.random.default_rng(s)
        former = [_exact_exponential_index((dj - dj.min()).astype(np.float64), 0.3 / 3 / 2, rng) for dj in d]
        assert pl.release(X, s).diagnostics["grid_points"] == former



_NANS = np.array([0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0xFFFFFFFFFFFFFFFF],
                 dtype=np.uint64).view(np.float64)                  # NaN, -NaN (x86's default), payload NaNs


def _edge_values(g, rng):
    """Every grid point and its two neighbouring doubles, the doubles at each bucket's ends, zeros, subnormals, +-inf,
    NaNs of either sign, the largest double, integers, and normal values at scales 1e-5..1e5 around shifts."""
    t = location_table(g)
    k = np.arange(max(t["lo"], 0), t["lo"] + t["V"].size + 2) << t["shift"]
    e = np.concatenate([k - 1, k, k + 1]); e = e[(e >= 0) & (e < 0x7FF0000000000000)].view(np.float64)
    sub = np.array([5e-324, 1e-320, 1e-315, 1e-310, 2.2e-308, 1e-300, 1.7976931348623157e308, np.inf])
    z = rng.standard_normal(3000) * rng.choice([1e-5, 1e-2, 1.0, 1e2, 1e5], 3000) + rng.choice([0, 1e-3, -7.0, 1e4], 3000)
    v = np.concatenate([g, np.nextafter(g, np.inf), np.nextafter(g, -np.inf), e, -e, sub, -sub, [0.0, -0.0], _NANS,
                        g[rng.integers(0, g.size, 500)], rng.integers(-5, 6, 500).astype(float), z])
    return rng.permutation(v)


@pytest.mark.parametrize("grid", [location_grid(1), location_grid(10 ** 4, (0.01, 1.0)), location_grid(10 ** 5, (1e-6, 1e6)),
                                  location_grid(10 ** 6), location_grid(10 ** 7, (1e-15, 1e15)),
                                  np.array([-1e-310, 0.0, 1e-310])])  # int16 and int32 codes; a point in 0's bucket
def test_location_counts_equal_two_searches_for_every_double(grid):
    "The table's codes and per-column counts equal np.searchsorted's (left + right) on the grid, value by value."
    rng = np.random.default_rng(grid.size)
    v = _edge_values(grid, rng)
    assert np.array_equal(location_bins(v, location_table(grid)),
                          np.searchsorted(grid, v, "left") + np.searchsorted(grid, v, "right"))
    for n, p in ((1, 1), (7, 3), (v.size // 20, 20)):
        x = v[:n * p].reshape(n, p)
        ref = np.stack([np.stack([np.bincount(np.searchsorted(grid, x[:, j], side=s), minlength=grid.size + 1)
                                  for j in range(p)]) for s in ("right", "left")], axis=1)
        assert np.array_equal(_coordinate_counts(x, grid), ref), (n, p)

def _fit_plan(n, **kw):
    return plan_centered(lambda e, d, R: plan_second_moment(n, 4, e, d, radius=R), n, 4, 1.0, 1e-6, radius=3.0, **kw)


def test_location_at_edge_is_released_and_the_thin_private_location_warns():
    X = np.random.default_rng(4).normal(size=(2000, 4)) * 0.1
    X[:, 2] -= 40.0                                                   # beyond the grid's magnitudes (0.01, 1)
    Y = X.copy(); Y[0] = 1e3                                          # a neighbour
    pl = _fit_plan(2000, location="private", location_bounds=(0.01, 1.0))
    a, b = pl.release(X, 1), pl.release(Y, 1)
    assert a.extras["location_at_edge"] == b.extras["location_at_edge"] == (2,)
    assert a.extras["location"][2] == location_grid(2000, (0.01, 1.0))[0]
    assert set(a.extras) == set(b.extras)                             # the same published keys on neighbours
    assert _fit_plan(2000, location="private").release(X, 1).extras["location_at_edge"] == ()
    assert "location_at_edge" not in _fit_plan(2000, location="none").release(X, 1).extras
    need = private_location_rows(0.1, 4, n_grid=300)
    assert need > 300
    for location, expected in (("private", 1), ("auto", 0)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            _fit_plan(300, location=location)
        hits = [x for x in w if issubclass(x.category, PrivateLocationWarning)]
        assert len(hits) == expected
        if hits: assert f"n >= {need}" in str(hits[0].message) and "public quantities" in str(hits[0].message)


@pytest.mark.parametrize("scale, end", [(1.0, "upper"), (1e-4, "lower")])
def test_estimator_warns_when_every_norm_lies_beyond_the_range(scale, end):
    from dppca_nb.estimators import AnalyzeGaussPCA
    X = np.random.default_rng(5).normal(size=(2000, 4))
    X = X / np.linalg.norm(X, axis=1, keepdims=True) * scale          # every norm = scale, beyond (0.01, 0.5)
    for s in range(3):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            est = AnalyzeGaussPCA(2, epsilon=5, delta=1e-6, centering="none", radius="private", radius_bounds=B,
                                  radius_share=0.3, random_state=s).fit(X)
        assert math.isclose(est.radius_ / est.radius_factor, B[1] if end == "upper" else B[0], rel_tol=1e-9)
        assert any(f"{end} end of its public range" in str(x.message) for x in w)
