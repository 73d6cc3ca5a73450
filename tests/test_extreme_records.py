"""One record of extreme magnitude against an ordinary one, for every registered mechanism (read from the registry,
with every option variant its parameter descriptions allow, and a dask array where it takes one) and every estimator
(its defaults, a private radius with location 'none' and 'auto', a private mean).

The extreme records: 1e18, 9.97e36 (a netCDF fill value), 1e100, 1e300, 1.7e308 in every coordinate (a norm beyond
the largest float), and the subnormal 5e-324 and 1e-310. Each replaces record 0 of a small data set.

1. The published record is that of the ordinary neighbour: the contract, every release extra (or fitted attribute)
   that does not move with the seed (the machinery of `test_neighbours`), `privacy_`; and no RuntimeWarning (a numpy
   overflow warning raised for one neighbour and not the other is itself a published difference).
2. The statistic is that of the record's image: a mechanism maps each record into its domain before it sums anything,
   and its contract's `domain` says how (clipped to R, normalised to 1; Kendall's pairs take a far record's direction
   only). With the same seed, the release on the extreme record and the release on its image -- the record at the bound
   along the same direction (Kendall: at 1e8 along it), or for a subnormal record the zero record (its unit direction
   where rows are normalised) -- agree to rounding, and so do the warnings they raise. Where the release hands a noisy
   statistic to post-processing (a `Plan.then` stage, or a covariance), that statistic is compared (post-processing
   such as an unconverged ADMM can turn rounding into large changes), and its change against the ordinary neighbour is
   at most the contract's sensitivity: the same seed draws the same noise, which cancels.

Together: the noiseless statistic moves by at most the contract's sensitivity and the published record does not move,
whatever the magnitude of the record. Before the fix, a record of 9.97e36 wiped the other rows out of the private mean
of a private-radius fit, a row of 1.7e308 was clipped to 0, a normalised row of 1e200 became 0, and Kendall's
winsorized statistic dropped (or raised on) a record of 1e200 and up.
"""
import contextlib
import math
import re
import warnings

import numpy as np
import pytest

from _helpers import ALGORITHMS, diff, public_differences, published, run, variant_id, variants
from test_neighbours import _fitted, _public_diffs

N, P, K = 40, 5, 2
SEED = 1234
U1 = np.eye(P)[0]
U_ALL = np.ones(P) / math.sqrt(P)
EXTREME = {"1e18": 1e18 * U1, "fill 9.97e36": 9.97e36 * U1, "1e100 all": 1e100 * U_ALL, "1e300": 1e300 * U1,
           "1.7e308 all": np.full(P, 1.7e308), "5e-324": 5e-324 * U1, "1e-310 all": 1e-310 * np.ones(P)}
REL = 1e-9                # floating-point slack on "change <= sensitivity" (a few roundings of O(1) numbers)
TOL = 1e-6                # releases on a record and on its image: rounding, amplified by post-processing


def _base():
    "n x p rows with a spiked second moment, most inside the unit ball; record 0 is ordinary (inside it)."
    X = np.random.default_rng(0).normal(size=(N, P)) * np.array([0.55, 0.35, 0.2, 0.15, 0.1])
    X[0] *= 0.5 / np.linalg.norm(X[0])
    return X


X0 = _base()


def _with(row):
    X = X0.copy()
    X[0] = row
    return X


def _direction(row):
    "The unit direction of a record, without squaring it (exact for every finite nonzero row)."
    m = np.abs(row).max()
    v = row / m
    return v / np.linalg.norm(v)


def _per_record_map(domain: str):
    "How the contract's domain maps each record before anything is summed: ('clip', R), ('normalise', 1) or ('pairs', None)."
    m = re.search(r"clipped to \|\|x\|\|_2 <= ([0-9.eE+-]+)", domain)
    if m: return "clip", float(m.group(1))
    if "normalised to ||x||_2 = 1" in domain: return "normalise", 1.0
    return "pairs", None                                            # Kendall: pair differences, no per-record map


def _image(domain: str, row):
    """The record the mechanism's per-record map (read from its contract's domain) sends `row` to, or a record whose
    statistic equals it to rounding: a subnormal record's is the zero record (the unit one where rows are normalised),
    a far record's in Kendall's pairs the record at 1e8 along the same direction."""
    kind, R = _per_record_map(domain)
    tiny = np.abs(row).max() < 1e-300
    if kind == "clip": return np.zeros(P) if tiny else R * _direction(row)
    if kind == "normalise": return _direction(row)
    return np.zeros(P) if tiny else 1e8 * _direction(row)


@contextlib.contextmanager
def _statistics():
    "Record the value every post-processed plan (`Plan.then`) hands to its post-processing: the noisy statistic."
    from dppca_nb.privacy import contract as C
    seen, then = [], C.Plan.then

    def spying(self, post, **changes):
        def spy(value, rng):
            seen.append(np.array(value, dtype=np.float64, copy=True))
            return post(value, rng)
        return then(self, spy, **changes)

    C.Plan.then = spying
    try: yield seen
    finally: C.Plan.then = then


def _release(case, X, seed=SEED):
    "(release, noisy statistic or None, warnings as (category, message)) of a case on X."
    alg, opts, dask = case
    if dask:
        import dask.array as da
        X = da.from_array(X, chunks=(10, P))
    with warnings.catch_warnings(record=True) as w, _statistics() as seen:
        warnings.simplefilter("always")
        r = run(alg, X, K, seed=seed, **opts)
    stat = seen[0] if seen else (np.asarray(r.value, dtype=np.float64) if alg.output == "covariance" else None)
    return r, stat, [(x.category.__name__, str(x.message)) for x in w]


def _floats(r):
    "The release's value and its float extras, flattened (what the image comparison reads)."
    out = [np.asarray(r.value, dtype=np.float64).ravel()]
    for k in sorted(r.extras):
        v = r.extras[k]
        if isinstance(v, np.ndarray) and v.dtype.kind == "f": out.append(v.ravel())
        elif isinstance(v, float): out.append(np.array([v]))
    return np.concatenate(out)


def _change(stat_a, stat_b, c):
    "The statistic's change in the norm the contract's sensitivity is stated in (the average's, in the local model)."
    D = np.asarray(stat_a) - np.asarray(stat_b)
    if D.ndim == 2 and "upper" in (c.sensitivity_norm or ""): D = D[np.triu_indices(D.shape[0])]
    return float(np.linalg.norm(D))


CASES = ([(a, v, False) for a in ALGORITHMS for v in variants(a, N, P, K)]
         + [(a, {}, True) for a in ALGORITHMS if a.dask])


def _case_id(case):
    alg, opts, dask = case
    return variant_id(alg, opts) + ("[dask]" if dask else "")


_ORDINARY = {}


def _ordinary(case):
    "The releases on the ordinary data set under two seeds (computed once per case)."
    key = _case_id(case)
    if key not in _ORDINARY: _ORDINARY[key] = [_release(case, X0.copy(), s) for s in (SEED, SEED + 1)]
    return _ORDINARY[key]


@pytest.mark.parametrize("record", list(EXTREME))
@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_extreme_record(case, record):
    alg, opts, dask = case
    what = f"{_case_id(case)} with record 0 = {record}"
    (ra, sa, _), (ra2, _, _) = _ordinary(case)
    rx, sx, wx = _release(case, _with(EXTREME[record]))
    ri, si, wi = _release(case, _with(_image(ra.contract.domain, EXTREME[record])))
    # 1. the published record: the contract and every extra that does not move with the seed; no numpy warning
    assert not diff(ra.contract.as_dict(), rx.contract.as_dict()), f"{what}: the contract moved"
    d = _public_diffs([published(ra)["extras"], published(ra2)["extras"]], published(rx)["extras"],
                      lambda i: published(_release(case, X0.copy(), SEED + 2 + i)[0])["extras"])
    assert not d, f"{what}: published extras depend on the record: " + "; ".join(d)
    assert not [m for c, m in wx if c == "RuntimeWarning"], f"{what}: a numpy warning was raised: {wx}"
    # 2. the statistic is the image's (the same seed: the same noise); so are the release and its warnings
    if sx is not None:
        assert np.isfinite(sx).all(), f"{what}: a non-finite statistic"
        assert np.abs(sx - si).max() <= TOL * max(1.0, np.abs(si).max()), f"{what}: the statistic is not its image's"
        c = rx.contract
        if c.sensitivity is not None and not (c.epsilon_certified or 0) > c.epsilon * (1 + 1e-9):   # not paper mode
            sens = c.sensitivity / (N if c.model == "local" else 1)
            slack = 2 * (c.grid or 0.0) * P                              # discrete noise: one grid step per entry
            change = _change(sx, sa, c)
            assert change <= sens * (1 + REL) + slack, f"{what}: the statistic moved by {change} > {sens}"
    else:
        a, b = _floats(rx), _floats(ri)
        assert a.shape == b.shape and np.abs(a - b).max() <= TOL, f"{what}: the release is not its image's"
    assert sorted(set(wx)) == sorted(set(wi)), f"{what}: other warnings than the image's: {set(wx) ^ set(wi)}"


def test_extreme_records_are_extreme():
    "Not idle: the records overflow a square (1e300), a norm (1.7e308 in every coordinate) and underflow one."
    with np.errstate(over="ignore", under="ignore"):
        assert np.isinf(EXTREME["1e300"] @ EXTREME["1e300"]) and np.isinf(np.linalg.norm(EXTREME["1.7e308 all"]))
        assert EXTREME["5e-324"] @ EXTREME["5e-324"] == 0.0
    assert {a.output for a, _, _ in CASES} == {"subspace", "covariance"} and any(d for _, _, d in CASES)
    kinds = {_per_record_map(run(a, X0, K, seed=0).contract.domain)[0] for a in ALGORITHMS}
    assert kinds == {"clip", "normalise", "pairs"}, kinds


# --- estimators: the defaults, a private radius (location 'none' and 'auto'), a private mean -------------------------

def _est_cases():
    from dppca_nb.estimators import ESTIMATORS
    out = []
    for alg in ALGORITHMS:
        if not alg.estimator: continue
        params = ESTIMATORS[alg.estimator]().get_params()
        cases = [{}]
        if "radius" in params and "radius_factor" in params:
            cases += [dict(radius="private", location=loc) for loc in ("none", "auto") if "location" in params]
        if "centering" in params and not alg.location_invariant and params["centering"] != "private":
            cases.append(dict(centering="private"))
        out += [(alg, c) for c in cases]
    return out


EST_CASES = _est_cases()
REFERENCE = 1e12          # far beyond every grid point, bound and center: counted at the top, clipped first


def _fit(case, X, seed=SEED):
    from dppca_nb.estimators import ESTIMATORS
    alg, params = case
    cls = ESTIMATORS[alg.estimator]
    kw = {**{k: v for k, v in alg.quick.items() if k in cls().get_params()}, **params}
    if "n_components" in cls().get_params(): kw.setdefault("n_components", K)
    with warnings.catch_warnings(record=True) as w, _statistics() as seen:
        warnings.simplefilter("always")
        est = cls(random_state=seed, **kw).fit(X)
    return est, (seen[0] if seen else None), [(x.category.__name__, str(x.message)) for x in w]


def _est_id(c):
    return c[0].estimator + ("" if not c[1] else "[" + ",".join(f"{k}={v}" for k, v in c[1].items()) + "]")


def _fitted_floats(est, skip=()):
    out = []
    for k, v in sorted(_fitted(est).items()):
        if k in skip: continue
        if isinstance(v, np.ndarray) and v.dtype.kind == "f": out.append(v.ravel())
        elif isinstance(v, float): out.append(np.array([v]))
    return np.concatenate(out) if out else np.zeros(0)


_EST_ORDINARY = {}


@pytest.mark.parametrize("record", [r for r in EXTREME if np.abs(EXTREME[r]).max() > 1])
@pytest.mark.parametrize("case", EST_CASES, ids=[_est_id(c) for c in EST_CASES])
def test_estimator_extreme_record(case, record):
    """privacy_ and every fitted attribute that does not move with the seed are the ordinary neighbour's; the fit (its
    noisy statistic where one is handed to post-processing, else its fitted values) and warnings are those of the same
    record at 1e12, far beyond every grid point, bound and center, which every path clips first."""
    key, what = _est_id(case), f"{_est_id(case)} with record 0 = {record}"
    if key not in _EST_ORDINARY: _EST_ORDINARY[key] = [_fit(case, X0.copy(), s) for s in (SEED, SEED + 1)]
    (a, _, _), (a2, _, _) = _EST_ORDINARY[key]
    x, sx, wx = _fit(case, _with(EXTREME[record]))
    f, sf, wf = _fit(case, _with(REFERENCE * _direction(EXTREME[record])))
    assert not diff(a.privacy_, x.privacy_), f"{what}: privacy_ moved"
    x2 = _fit(case, _with(EXTREME[record]), SEED + 1)[0]     # a value that moves with the seed on either is noisy
    d = public_differences([_fitted(a), _fitted(a2)], [_fitted(x), _fitted(x2)])
    assert not d, f"{what}: published attributes depend on the record: " + "; ".join(d)
    assert not [m for c, m in wx if c == "RuntimeWarning"], f"{what}: a numpy warning was raised: {wx}"
    for name in ("location_", "mean_radius_", "mean_", "radius_"):        # the releases before the main statistic
        if getattr(x, name, None) is not None:
            assert np.allclose(getattr(x, name), getattr(f, name), rtol=TOL, atol=TOL), f"{what}: {name} moved"
    if sx is not None:
        assert np.abs(sx - sf).max() <= TOL * max(1.0, np.abs(sf).max()), f"{what}: the statistic is not the far record's"
    else:
        # an error simulated at the released variances reruns the mechanism on synthetic rows: rounding in those
        # variances can change its discrete draws, so it is compared only where it is computed by a formula
        skip = ("expected_error_", "expected_error_interval_") if case[0].simulate_error else ()
        u, v = _fitted_floats(x, skip), _fitted_floats(f, skip)
        assert u.shape == v.shape and np.abs(u - v).max() <= TOL * max(1.0, np.abs(v).max()), f"{what}: the fit moved"
    assert sorted({c for c, _ in wx}) == sorted({c for c, _ in wf}), f"{what}: other warnings: {set(wx) ^ set(wf)}"


def test_private_radius_fit_keeps_the_other_rows():
    """The case that was wrong: 20,000 rows near (0.5, 0, ...), a private radius, no location, record 0 at 9.97e36 (a
    fill value). The released mean is about 0.5 (noise sd about 0.002 here), as with an ordinary record 0; a raw sum
    minus the far rows' excess released about 0.0."""
    from dppca_nb.estimators import AnalyzeGaussPCA
    X = np.random.default_rng(5).normal(size=(20_000, P)) * 0.05
    X[:, 0] += 0.5
    means = {}
    for name, row in (("ordinary", X[0].copy()), ("fill", 9.97e36 * U1), ("far", REFERENCE * U1)):
        Z = X.copy(); Z[0] = row
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = AnalyzeGaussPCA(n_components=1, radius="private", radius_factor=2.0, location="none",
                                  random_state=3).fit(Z)          # factor 2: no ordinary row is clipped for the mean
        means[name] = (est.mean_[0], est.radius_)
    assert abs(means["fill"][0] - 0.5) < 0.02 and abs(means["ordinary"][0] - 0.5) < 0.02, means
    assert means["fill"] == pytest.approx(means["far"], rel=1e-12), means
