"""The array-API path (dppca_nb.backends.array_api) on a GPU with CuPy: the same numbers as the numpy path, and the
absolute timings printed (run with -s to see them). Skipped, with the reason, where CuPy or a CUDA device is missing;
install with `pip install cupy-cuda12x`."""
import json
import os

import numpy as np
import pytest

cp = pytest.importorskip("cupy", reason="CuPy is not installed (pip install cupy-cuda12x): no GPU check of the array-API path")


def _n_devices():
    try: return cp.cuda.runtime.getDeviceCount()
    except Exception: return 0


pytestmark = pytest.mark.skipif(_n_devices() == 0, reason="CuPy imports but sees no CUDA device")

from dppca_nb.algorithms.kendall import kendall_cross_sum, kendall_tau, kendall_within_sum  # noqa: E402
from dppca_nb.backends.array_api import (kendall_sums_xp, second_moment_sums_xp, time_array_api,  # noqa: E402
                                         to_numpy)
from dppca_nb.backends.statistics import second_moment_sums  # noqa: E402


def _rel(a, b): return float(np.linalg.norm(to_numpy(a) - b) / max(np.linalg.norm(b), 1e-300))


def _hard_data(n=301, p=7, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) @ rng.standard_normal((p, p))
    X[5] = X[17]; X[18] = X[17]                          # exact duplicates (a triple)
    X[40] = X[41] + 1e-9 * rng.standard_normal(p)        # near-duplicate pair
    X[100:106] = 1e9 + rng.standard_normal((6, p))       # cluster of huge outliers
    X[200] = -1e12                                       # one enormous outlier
    return X


@pytest.mark.parametrize("n,p,block_rows", [(2000, 8, None), (50_000, 60, 7000), (3001, 300, 1000), (5, 1, 2)])
def test_second_moment_matches_numpy(n, p, block_rows):
    rng = np.random.default_rng(n + p)
    X = rng.standard_normal((n, p)) * 2
    norms = np.linalg.norm(X, axis=1)
    u = np.finfo(float).eps / 2
    for radius in (None, float(np.median(norms)), float(norms.min()) / 2):
        for center in (None, X.mean(axis=0) + 0.5):
            ref = second_moment_sums(X, radius=radius, row_sums=True, center=center)
            st = second_moment_sums_xp(cp.asarray(X), radius=radius, row_sums=True, center=center, block_rows=block_rows)
            assert isinstance(st["M"], cp.ndarray)
            assert (st["n"], st["p"], st["n_clipped"]) == (ref["n"], ref["p"], ref["n_clipped"])
            assert _rel(st["M"], ref["M"]) < 4 * n * u               # two orders of n additions in double precision
            assert _rel(st["row_sum"], ref["row_sum"]) < 4 * n * u * max(1.0, np.abs(X).sum() / np.abs(ref["row_sum"]).sum())


@pytest.mark.parametrize("transform,radius", [("spherical", None), ("winsorized", 2.0), ("winsorized", None)])
def test_kendall_matches_numpy(transform, radius):
    Xh = _hard_data()
    kw = dict(winsorization_radius=radius)
    K0 = kendall_tau(Xh, transform, **kw)
    for b in (64, 2048):
        K = kendall_tau(cp.asarray(Xh), transform, block_rows=b, **kw)
        assert isinstance(K, cp.ndarray) and _rel(K, K0) < 1e-10
    A, B = Xh[:150], np.vstack([Xh[150:], Xh[17:19]])
    assert _rel(kendall_cross_sum(cp.asarray(A), cp.asarray(B), transform, **kw)[0],
                kendall_cross_sum(A, B, transform, **kw)[0]) < 1e-10
    Xd = np.r_[np.zeros((5, 3)), np.random.default_rng(1).standard_normal((4, 3))]   # duplicates at the median
    assert _rel(kendall_within_sum(cp.asarray(Xd), transform, **kw)[0], kendall_within_sum(Xd, transform, **kw)[0]) < 1e-10
    X3 = np.vstack([Xh, Xh, Xh[:-1]])
    K0 = kendall_tau(X3, transform, design="regular", degree=6, random_state=2, **kw)
    assert _rel(kendall_tau(cp.asarray(X3), transform, design="regular", degree=6, random_state=2, **kw), K0) < 1e-10


def test_g_dppca_plan_on_gpu():
    "The plan releases from a CuPy X: the statistic on the device, the noise on the host, the numpy answer for a seed."
    from dppca_nb.algorithms.robust import plan_g_dppca
    X = np.random.default_rng(12).standard_normal((500, 6)) * np.array([3.0, 2, 1, 1, 1, 1])
    plan = plan_g_dppca(500, 6, 2, 1.0, 1e-5)
    assert np.abs(plan.release(cp.asarray(X), 3).value - plan.release(X, 3).value).max() < 1e-9


def test_kendall_large_matches_numpy():
    X = np.random.default_rng(3).standard_normal((20_000, 40))
    S0 = kendall_within_sum(X)[0]
    S, n_pairs, _ = kendall_sums_xp(cp.asarray(X))
    assert n_pairs == 20_000 * 19_999 // 2 and _rel(S, S0) < 1e-10


def test_time_on_gpu():
    "Absolute times (no assertion on speed); written to $OUT/array_api_gpu.json when OUT is set."
    rows = [time_array_api(n, p, kendall_n=kn) for n, p, kn in ((1_000_000, 50, 20_000), (200_000, 200, 50_000))]
    print(json.dumps(rows, indent=1))
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "array_api_gpu.json"), "w") as f: json.dump(rows, f, indent=1)
    assert all(r["namespace"] == "array_api_compat.cupy" for r in rows)
