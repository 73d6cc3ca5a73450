"""One clipping rule for every path: `backends.statistics.clip_scales` computes the norms and factors, and the
clipped rows, counts and sums are the numbers the package computed before the rule had one home.

Bit for bit where the arithmetic is the same: `clip_rows` (against its former code, kept below as the reference), the
fused kernels `_moment_kernel` and `_summary_kernel` (against their former code, below), the kernel's rescaled path
against `clip_rows`'s rows, the local model's devices. To rounding where it is not: the kernel's correction path (a
clipped row's excess is subtracted from the sum instead of summing the rescaled row), the array-API twin on the
device (`xp.sum(y * y)` instead of `einsum`, blocks in another order), the textbook `x min(1, R / ||x||)` with
`np.linalg.norm`.
"""
import math

import numpy as np
import pytest

from dppca_nb.backends import statistics as S
from dppca_nb.backends.statistics import clip_rows, clip_scales
from dppca_nb.core.validation import check_data, check_positive

u = np.finfo(float).eps / 2


# --- the former code, verbatim: the reference of "the same numbers as before" ------------------------------------

def _clip_rows_before(X, radius=1.0):
    r = check_positive(radius, "radius")
    A = check_data(X, min_rows=1)
    norms = np.sqrt(np.einsum("ij,ij->i", A, A))
    big = np.isinf(norms)
    if big.any():
        m = np.abs(A[big]).max(axis=1)
        norms[big] = m * np.linalg.norm(A[big] / m[:, None], axis=1)
    over = norms > r
    if over.any(): A[over] *= (r / norms[over])[:, None]
    return A, int(over.sum())


def _exact_norms(y, rows):
    m = np.abs(y[rows]).max(axis=1)
    return m * np.linalg.norm(y[rows] / m[:, None], axis=1)


def _moment_kernel_before(x, radius, row_sums, center, moment=True):
    n, p = x.shape
    s = min(n, S.sub_block_rows(p))
    M = np.zeros((p, p)) if moment else None
    rs = np.zeros(p) if row_sums else None
    ones = np.ones(s)
    C = None if center is None else np.tile(center, (s, 1))
    buf = np.empty((s, p)) if center is not None else None
    sqbuf = np.empty(s) if radius is not None else None
    r = None if radius is None else float(radius)
    n_clipped = n_bad = 0
    for i in range(0, n, s):
        xb = x[i:i + s]
        k = xb.shape[0]
        yb = xb if C is None else np.subtract(xb, C[:k], out=buf[:k])
        idx = scale = M0 = None
        if moment and yb is xb and r is not None:
            with np.errstate(over="ignore", invalid="ignore"):
                M0 = yb.T @ yb
        if r is not None:
            with np.errstate(over="ignore"):
                sq = np.einsum("ij,ij->i", yb, yb, out=sqbuf[:k])
            if not (math.sqrt(sq.max()) <= r):
                big = ~np.isfinite(sq)
                if big.any():
                    bad = ~np.isfinite(yb[big]).all(axis=1)
                    if bad.any():
                        n_bad += int(bad.sum()); continue
                norms = np.sqrt(sq)
                if big.any(): norms[big] = _exact_norms(yb, big)
                idx = np.flatnonzero(norms > r)
                n_clipped += idx.size
                if idx.size:
                    scale = r / norms[idx]
                    if big.any() or idx.size > k // 8 or norms[idx].max() > S.CORRECT_UP_TO * r:
                        full = np.ones(k); full[idx] = scale
                        if buf is None: buf = np.empty((s, p))
                        yb = np.multiply(yb, full[:, None], out=buf[:k])
                        idx = None
                else: idx = None
        Mb = (M0 if M0 is not None and yb is xb else yb.T @ yb) if moment else None
        rb = ones[:k] @ yb if row_sums else None
        if idx is not None:
            Yo = yb[idx]
            if moment: Mb -= Yo.T @ (Yo * (1 - scale * scale)[:, None])
            if row_sums: rb -= (1 - scale) @ Yo
        if r is None and not math.isfinite(np.trace(Mb) if moment else rb.sum()):
            bad = ~np.isfinite(yb).all(axis=1)
            if bad.any():
                n_bad += int(bad.sum()); continue
        if moment: M += Mb
        if row_sums: rs += rb
    return M, n_clipped, n_bad, rs


def _summary_kernel_before(x, mean_radius, far, norms_out):
    n, p = x.shape
    s = min(n, S.sub_block_rows(p))
    G, raw, rs = np.zeros((p, p)), np.zeros(p), np.zeros(p)
    ones = np.ones(s)
    sqbuf, buf, zbuf = np.empty(s), None, None
    r = float(mean_radius)
    n_clipped = n_bad = 0
    for i in range(0, n, s):
        xb = x[i:i + s]
        k = xb.shape[0]
        with np.errstate(over="ignore", invalid="ignore"):
            Gb = xb.T @ xb
            sq = np.einsum("ij,ij->i", xb, xb, out=sqbuf[:k])
        top = math.sqrt(sq.max())
        norms = np.sqrt(sq, out=norms_out[i:i + k])
        big = None
        if not math.isfinite(top):
            big = ~np.isfinite(sq)
            bad = ~np.isfinite(xb[big]).all(axis=1)
            if bad.any():
                n_bad += int(bad.sum()); continue
            norms[big] = _exact_norms(xb, big)
        zb = xb
        if not top <= far:
            out = np.flatnonzero(norms > far)
            if out.size:
                if zbuf is None: zbuf = np.empty((s, p))
                zb = zbuf[:k]; zb[...] = xb; zb[out] = 0.0
                Gb = zb.T @ zb
        G += Gb
        raw_b = ones[:k] @ zb
        raw += raw_b
        yb, idx = xb, None
        if not top <= r:
            idx = np.flatnonzero(norms > r)
            n_clipped += idx.size
            if idx.size:
                scale = r / norms[idx]
                if big is not None or idx.size > k // 8 or norms[idx].max() > S.CORRECT_UP_TO * r:
                    full = np.ones(k); full[idx] = scale
                    if buf is None: buf = np.empty((s, p))
                    yb = np.multiply(yb, full[:, None], out=buf[:k])
                    idx = None
            else: idx = None
        rb = raw_b.copy() if (yb is xb and zb is xb) else ones[:k] @ yb
        if idx is not None: rb -= (1 - scale) @ yb[idx]
        rs += rb
    return G, raw, rs, n_clipped, n_bad


# --- the data: every branch of the rule ---------------------------------------------------------------------------

def _cases():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 6))
    few = X * 0.3; few[::301] *= 10                                  # a few rows over 1: corrected by subtraction
    far = X.copy(); far[::500] *= 1e6                                # rows beyond 1024 radii: rescaled
    huge = X.copy(); huge[3] = [1e200, -3e200, 2e200, 0, 0, 1]; huge[7] *= 1e170   # overflowing squares
    edge = np.vstack([np.eye(6), -np.eye(6), np.zeros((2, 6)), X[:30]])          # norms exactly 1 and 0
    wide = rng.normal(size=(500, 60)) * 0.2                          # sub-blocks of 2184 rows: several per block
    tall = rng.normal(size=(50_000, 2)) * 0.8                        # p = 2: sub-blocks of 65536 rows
    return dict(X=X, few=few, far=far, huge=huge, edge=edge, wide=wide, tall=tall)


CASES = _cases()
RADII = (1e-3, 0.5, 1.0, 2.5, 1e3)


@pytest.mark.parametrize("name", CASES)
def test_clip_rows_as_before(name):
    "clip_rows: the same rows and count as its former code, bit for bit, at every radius."
    for r in RADII:
        new, m = clip_rows(CASES[name], r)
        old, m0 = _clip_rows_before(CASES[name], r)
        assert m == m0 and np.array_equal(new, old), (name, r)


def _textbook_norms(A):
    "Row norms by np.linalg.norm of each row divided by its largest entry (no overflow; zero rows give 0)."
    m = np.abs(A).max(axis=1)
    return m * np.linalg.norm(A / np.where(m > 0, m, 1.0)[:, None], axis=1)


@pytest.mark.parametrize("name", CASES)
def test_clip_scales_is_the_rule(name):
    "clip_scales: the rows over the radius and the factors radius / norm, applied by clip_rows; the textbook to rounding."
    A = CASES[name]
    p = A.shape[1]
    for r in RADII:
        c = clip_scales(A, r, norms_out=np.empty(A.shape[0]))
        assert np.array_equal(c.rows, np.flatnonzero(c.norms > r)) and c.n_bad == 0
        assert np.array_equal(c.scale, r / c.norms[c.rows])
        Xc = clip_rows(A, r)[0]
        assert np.array_equal(Xc[c.rows], A[c.rows] * c.scale[:, None])            # the same factors, applied
        norms = _textbook_norms(A)
        np.testing.assert_allclose(c.norms, norms, rtol=4 * p * u, atol=0)          # another summation: to rounding
        with np.errstate(divide="ignore"):
            np.testing.assert_allclose(Xc, A * np.minimum(1, r / norms)[:, None], rtol=8 * p * u, atol=0)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("center", [False, True])
def test_moment_kernel_as_before(name, center):
    "The fused kernel: the same sums and counts as its former code, bit for bit (moment, row sums, centered)."
    A = CASES[name]
    c = np.full(A.shape[1], 0.05) if center else None
    for r in RADII + (None,):
        for moment, row_sums in ((True, True), (True, False), (False, True)):
            new = S._moment_kernel(A, r, row_sums, c, moment)
            old = _moment_kernel_before(A, r, row_sums, c, moment)
            for a, b in zip(new, old):
                assert (a is None and b is None) or np.array_equal(a, b), (name, r, moment, row_sums)


def _summary_kernel_one_band(x, mean_radius, far, norms_out):
    "The kernel with one band (a known radius: the rows up to `far`), its band's sums as the former code's arrays."
    G, raw, rs, n_clipped, n_bad = S._summary_kernel(x, mean_radius, np.array([far]), norms_out)
    p = x.shape[1]
    return G.get(0, np.zeros((p, p))), raw.get(0, np.zeros(p)), rs, n_clipped, n_bad


@pytest.mark.parametrize("name", CASES)
def test_summary_kernel_as_before(name):
    "The one-pass summary of a private centering: the same norms, raw sums, clipped row sum and count, bit for bit."
    A = CASES[name]
    for mr in RADII:
        n1, n0 = np.empty(A.shape[0]), np.empty(A.shape[0])
        new = _summary_kernel_one_band(A, mr, S.CORRECT_UP_TO * 1.0, n1)
        old = _summary_kernel_before(A, mr, S.CORRECT_UP_TO * 1.0, n0)
        assert all(np.array_equal(a, b) for a, b in zip(new, old)) and np.array_equal(n1, n0), (name, mr)


def test_non_finite_rows_counted_as_before():
    "A row with a NaN or inf is counted, never clipped, by every kernel."
    A = CASES["X"].copy(); A[[5, 2000], 1] = [np.nan, np.inf]
    for r in (0.5, 10.0):
        assert S._moment_kernel(A, r, True, None)[2] == _moment_kernel_before(A, r, True, None)[2] == 2
        n1, n0 = np.empty(len(A)), np.empty(len(A))
        assert _summary_kernel_one_band(A, r, 1024.0, n1)[4] == _summary_kernel_before(A, r, 1024.0, n0)[4] == 2
    assert clip_scales(A[:10], 0.5).n_bad == 1


@pytest.mark.parametrize("name", CASES)
def test_every_path_clips_the_same_rows(name):
    """The fused sums, the private mean's sums, the one-pass summary and clip_rows count the same clipped rows; the
    second moment equals clip_rows's rows' to rounding (a few rows are corrected by subtraction)."""
    A = CASES[name]
    for r in RADII:
        Xc, m = clip_rows(A, r)
        st = S.second_moment_sums(A, radius=r, row_sums=True)
        assert st["n_clipped"] == m == S.clipped_row_sums(A, radius=r)["n_clipped"]
        assert S.moment_summary(A, mean_radius=r, radius=1.0)["n_clipped"] == m
        Yb = clip_rows(A, S.CORRECT_UP_TO * r)[0]     # the rows as they enter the sums before a correction
        bound = 2 * len(A) * u * (np.abs(Yb).T @ np.abs(Yb))  # 2 gamma_n |Y|'|Y| (see backends.statistics)
        assert (np.abs(st["M"] - Xc.T @ Xc) <= bound + 8 * u * np.abs(Xc.T @ Xc)).all(), (name, r)


def test_rescaled_path_is_clip_rows():
    "One sub-block with many clipped rows: the kernel sums exactly clip_rows's rows (the same BLAS product)."
    A = CASES["X"]
    for r in (1e-3, 0.5, 1.0):
        Xc = clip_rows(A, r)[0]
        st = S.second_moment_sums(A, radius=r, row_sums=True)
        assert np.array_equal(st["M"], Xc.T @ Xc) and np.array_equal(st["row_sum"], np.ones(len(A)) @ Xc)


def test_local_devices_clip_by_the_rule():
    "The local model's devices clip x / R to the unit ball with clip_rows: the count and reports as before."
    from dppca_nb.algorithms import local as L
    X = CASES["X"][:400] * 0.6
    for R in (0.5, 1.0, 2.0):
        rz = L.local_randomizer(6, 1.0, 1e-5, radius=R)
        agg, n_clipped = L._device_sums(X, rz, 128, np.random.default_rng(3))
        assert n_clipped == _clip_rows_before(X / R, 1.0)[1] == clip_rows(X / R, 1.0)[1]
        rep = rz.reports(X, random_state=4, packed=True)
        xc = _clip_rows_before(X / R, 1.0)[0]
        assert np.array_equal(rep, L._unit_reports(rz, xc, np.random.default_rng(4)) * R ** 2)


def test_array_api_twin_clips_the_same_rows():
    "The device twin clips the same rows as the numpy rule and gives the same sums to rounding."
    xs = pytest.importorskip("array_api_strict")
    from dppca_nb.backends.array_api import second_moment_sums_xp, to_numpy
    for name in ("X", "few", "far", "huge", "edge"):
        A = CASES[name]
        for r in RADII:
            st, ref = second_moment_sums_xp(xs.asarray(A), radius=r, row_sums=True), S.second_moment_sums(A, radius=r, row_sums=True)
            assert st["n_clipped"] == ref["n_clipped"], (name, r)
            M, M0 = to_numpy(st["M"]), ref["M"]
            assert np.linalg.norm(M - M0) <= 8 * len(A) * u * max(np.linalg.norm(M0), 1e-300), (name, r)


# --- every registered algorithm with a clipping bound: a row far outside the ball enters as the row at the bound ---

def _clipping_cases():
    from _helpers import ALGORITHMS
    return [(a, R) for a in ALGORITHMS if "radius" in a.options for R in (1.0, 2.5)]


CLIPPING_CASES = _clipping_cases()


@pytest.mark.parametrize("case", CLIPPING_CASES, ids=[f"{a.key}-R{R}" for a, R in CLIPPING_CASES])
def test_registered_release_clips_rows(case):
    """Rows are clipped to the radius before any noise: with the same seed, a row 100 R e_1 and the row R e_1 give the
    same release (to rounding: a clipped row's excess may be subtracted from a sum rather than the row rescaled), and
    the curator's count of clipped rows, where the release reports one, is one larger."""
    from _helpers import run
    alg, R = case
    X = np.random.default_rng(7).normal(size=(40, 5)) * 0.2 * R
    far, at = X.copy(), X.copy()
    far[0], at[0] = 100 * R * np.eye(5)[0], R * np.eye(5)[0]
    a, b = (run(alg, Z, 2, seed=3, radius=R) for Z in (far, at))
    # a subspace is compared by its projector (a Fantope solution of equal eigenvalues has no preferred basis, and
    # rounding picks one); a covariance entry by entry
    span = (lambda V: np.asarray(V) @ np.asarray(V).T) if alg.output == "subspace" else np.asarray
    np.testing.assert_allclose(span(a.value), span(b.value), atol=1e-9)
    assert a.contract.as_dict() == b.contract.as_dict()
    if "n_clipped" in a.diagnostics: assert a.diagnostics["n_clipped"] == b.diagnostics["n_clipped"] + 1
    # not idle: the bound enters the contract (its domain, sensitivities or noise scales)
    assert run(alg, far, 2, seed=3, radius=2 * R).contract.as_dict() != a.contract.as_dict()


def test_every_bounded_algorithm_is_tested():
    "Not idle: the registry's algorithms with a `radius` are found (local and central, subspaces and covariances)."
    algs = {a for a, _ in CLIPPING_CASES}
    assert {a.model for a in algs} == {"central", "local"} and {a.output for a in algs} == {"subspace", "covariance"}


# --- the ClippingWarning: silent by default (whether it fires is an exact function of the data) -------------------

_FIT_SCRIPT = """
import warnings, numpy as np
from dppca_nb import AnalyzeGaussPCA, PrivateStandardScaler, ClippingWarning
if {enable}: warnings.simplefilter("default", ClippingWarning)
X = np.random.default_rng(0).normal(size=(300, 4))                 # most rows above the default bound 1
AnalyzeGaussPCA(2, centering="none", random_state=0).fit(X)
PrivateStandardScaler(random_state=0).fit(X * 3)                   # most values outside the default bounds
"""


@pytest.mark.parametrize("enable", [False, True])
def test_clipping_warning_is_silent_in_a_fresh_session_unless_turned_on(enable):
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    out = subprocess.run([sys.executable, "-c", _FIT_SCRIPT.format(enable=enable)], capture_output=True, text=True,
                         env={**env, "OPENBLAS_NUM_THREADS": "1"}, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("ClippingWarning") == (2 if enable else 0), out.stderr


def test_clipping_warning_hidden_at_fit_even_after_the_filters_were_reset():
    import warnings
    from dppca_nb.estimators import AnalyzeGaussPCA, ClippingWarning
    X = np.random.default_rng(0).normal(size=(300, 4))
    fit = lambda: AnalyzeGaussPCA(2, centering="none", random_state=0).fit(X)
    with warnings.catch_warnings(record=True) as hidden:
        warnings.resetwarnings()                                       # e.g. the filter list of a fresh test run
        fit()
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("default", ClippingWarning)              # the curator turns it on
        fit()
    with warnings.catch_warnings(record=True) as every:
        warnings.simplefilter("always")                                # a filter for every warning wins too
        fit()
    assert not [w for w in hidden if issubclass(w.category, ClippingWarning)]
    assert len([w for w in shown if issubclass(w.category, ClippingWarning)]) == 1
    assert len([w for w in every if issubclass(w.category, ClippingWarning)]) == 1


# --- a private clipping bound on rows of equal norms --------------------------------------------------------------

@pytest.mark.parametrize("norm, bounds", [(1.0, None), (1e-3, (1e-5, 10.0))])
def test_private_radius_of_equal_norm_rows_is_their_norm(norm, bounds):
    """Rows of one norm (unit-norm rows, the common case): the private radius draws the norms' cell, whose score is 0
    while every other cell scores n / 2 at the median, so another cell has probability at most K e^{-eps_r n / 4}
    (eps_r = 0.1 x 1 = 0.1, n = 2000: K e^-50 < 1e-18 per fit). The estimator clips at radius_factor times the cell's
    upper end: within a factor e^{1/64} above radius_factor x the norm, at every seed."""
    from dppca_nb.estimators import AnalyzeGaussPCA
    from dppca_nb.privacy.centering import check_radius_bounds, radius_grid
    X = np.random.default_rng(11).normal(size=(2000, 4))
    X *= norm / np.linalg.norm(X, axis=1, keepdims=True)
    w, K = radius_grid(check_radius_bounds(bounds, 4))[1:]
    assert K * math.exp(-0.1 * 2000 / 4) < 1e-18
    for s in range(6):
        est = AnalyzeGaussPCA(2, epsilon=1.0, delta=1e-6, centering="none", radius="private", radius_bounds=bounds,
                              random_state=s).fit(X)
        assert est.radius_factor == 1.0                                   # the default: the quantile itself
        assert 0 <= math.log(est.radius_ / (est.radius_factor * norm)) <= w * (1 + 1e-9), est.radius_
