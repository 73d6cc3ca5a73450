"""Neighbour tests for every registered algorithm, every building block with a release of its own, every estimator
and every command-line method: what is published must not depend on the data except through the noisy release.

Each is run on neighbouring data sets under the relation its contract claims (replace-one everywhere): one row
replaced by another row inside the norm ball, by a row far outside it (so that the number of clipped rows differs), by
a unit row along the (k+1)-th eigenvector of the second moment (so that the empirical eigengap moves), and by a copy
of another row (an exact tie among Kendall's pair differences). With the same seed the noise draws are the same, so
the noisy outputs differ only by the change of the statistic; everything else that is published -- the contract, and
every value in the release's extras (or every fitted attribute of an estimator, or the command line's printed text)
that does not change with the seed on the same data -- is a function of the public quantities (n, p, k, the budget,
the norm bound, the options) and must be IDENTICAL (floats exactly equal) on both data sets.

Which extras are noisy is measured, not listed: a value that differs between two seeds on the same data is a noisy
release (or post-processing of one) and may move between neighbours; a value that is the same under both seeds is
deterministic, and if it moves between neighbours it is an exact function of the data that is published (a
clipped-row count, an empirical eigengap, a data-dependent noise scale, a rejection-trial count, ...): its test fails
and names it. Such values belong in `Release.diagnostics` (curator-only, never published). The algorithms and their
option variants are read from the registry (`tests/_helpers.py`), so a newly registered mechanism is covered here.
"""
import contextlib
import io
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from _helpers import (ALGORITHMS, DLT, EPS, diff, published, random_keys, run, variant_id, variants)

from dppca_nb.backends.statistics import clip_rows

warnings.filterwarnings("ignore")       # PrivacyWarnings of deliberately weak settings and numerical warnings

N, P, K = 40, 5, 2
SEED = 1234
SEEDS = (SEED, SEED + 1)    # two seeds on the same data tell the noisy releases from the deterministic values


# --- the data and its neighbours ------------------------------------------------------------------------

def _base():
    "n x p rows with a spiked second moment; most rows inside the unit ball, a few outside (clipped in both)."
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, P)) * np.array([0.55, 0.35, 0.2, 0.15, 0.1])
    X[0] *= 0.5 / np.linalg.norm(X[0])              # the replaced row: strictly inside the ball
    X[1] *= 3.0 / np.linalg.norm(X[1])              # one row clipped in every data set
    return X


def _neighbour(X, kind):
    "A replace-one neighbour of X: row 0 replaced."
    Y = X.copy()
    if kind == "inside":                            # another row inside the ball (no clipping change)
        Y[0] = np.array([0.1, -0.3, 0.2, 0.25, -0.1])
    elif kind == "far":                             # far outside the ball: clipped, so n_clipped differs
        Y[0] = 100.0 * np.ones(P) / math.sqrt(P)
    elif kind == "gap":                             # along u_{k+1}: the empirical eigengap lambda_k - lambda_{k+1} shrinks
        Xc = clip_rows(X)[0]
        w, Q = np.linalg.eigh(Xc.T @ Xc / len(X))
        Y[0] = Q[:, ::-1][:, K]
    elif kind == "duplicate":                       # a copy of another row: an exact tie for Kendall's pair terms
        Y[0] = X[2]
    else:
        raise ValueError(kind)
    return Y


NEIGHBOURS = ["inside", "far", "gap", "duplicate"]
X0 = _base()


def _pair(kind):
    return X0.copy(), _neighbour(X0, kind)


def test_neighbours_differ_as_intended():
    "The neighbours really differ in one row, in the clipped-row count ('far') and in the eigengap ('gap')."
    from dppca_nb.algorithms.smooth import empirical_eigengap
    for kind in NEIGHBOURS:
        X, Y = _pair(kind)
        assert (X != Y).any(axis=1).sum() == 1 and (X[0] != Y[0]).any()
    X, Y = _pair("far")
    assert clip_rows(Y)[1] == clip_rows(X)[1] + 1
    X, Y = _pair("gap")
    assert abs(empirical_eigengap(X, K) - empirical_eigengap(Y, K)) > 1e-3




# --- exact comparison of published values ----------------------------------------------------------------

def _assert_same(a, b, what):
    diffs = diff(a, b)
    assert not diffs, f"{what}: published values depend on the data: " + "; ".join(sorted(diffs))


def test_comparison_is_exact():
    "The comparison that every test below relies on sees a one-ulp change, a nested one, a changed count or key."
    x = 0.1
    assert diff({"a": x}, {"a": np.nextafter(x, 1.0)})
    assert diff({"a": {"b": np.zeros(3)}}, {"a": {"b": np.array([0.0, 0.0, 1e-300])}})
    assert diff({"n_clipped": 3}, {"n_clipped": 4}) and diff({"a": 1}, {"a": 1, "b": 2})
    assert diff({"t": (1, 2)}, {"t": [1, 2]}) and diff({"x": 1}, {"x": 1.0})
    assert not diff({"a": [np.nan, (1.0, "s")], "b": np.array([np.nan])}, {"a": [np.nan, (1.0, "s")], "b": np.array([np.nan])})
    # the noisy keys are those that move with the seed: a count that moves only with the data is not among them
    seeds = [{"noisy": 0.3, "count": 3, "n": 40}, {"noisy": -1.2, "count": 3, "n": 40}]
    assert random_keys(seeds) == {"noisy"}
    assert _public_diffs(seeds, {"noisy": 0.5, "count": 4, "n": 40}) == ["count: 3 != 4"]
    # ... unless further seeds show it moving with the seed (a discrete post-processing of a noisy value)
    assert _public_diffs(seeds, {"noisy": 0.5, "count": 4, "n": 40}, lambda i: {"noisy": i, "count": 3 + i, "n": 40}) == []
    assert _public_diffs(seeds, {"noisy": 0.5, "count": 4, "n": 40}, lambda i: {"noisy": i, "count": 3, "n": 40})


def _public_diffs(runs_x, run_y, more=None):
    """Differences between run_y and runs_x[0] (the same seed, neighbouring data) at keys that do not move with the
    seed. A discrete post-processing of a noisy release (a count, a chosen k) can come out the same under two seeds:
    where a key differs, `more(i)` (the published dict of the i-th further seed on the first data set) is asked for up
    to EXTRA_SEEDS more runs, and the key is excused only if it moves with the seed in one of them."""
    noisy = random_keys(runs_x)
    keep = lambda d: {k: v for k, v in d.items() if k not in noisy}
    diffs = sorted(diff(keep(runs_x[0]), keep(run_y)))
    if diffs and more is not None:
        runs = list(runs_x)
        for i in range(EXTRA_SEEDS):
            runs.append(more(i))
            if not _public_diffs(runs, run_y): return []
        return _public_diffs(runs, run_y)
    return diffs


EXTRA_SEEDS = 6


def _dask(X):
    import dask.array as da
    return da.from_array(X, chunks=(10, P))         # 4 row blocks


# --- every registered algorithm, with every option variant its parameter descriptions allow ----------------
# A case: (algorithm, options, epsilon, dask). The defaults and each accepted value of each option (variants); a
# dask array where the algorithm takes one; a large epsilon (sharp releases: rejection samplers accept sooner,
# private quantiles concentrate), where a count that depends on the data is likelier to show up.

CASES = ([(a, v, EPS, False) for a in ALGORITHMS for v in variants(a, N, P, K)]
         + [(a, {}, EPS, True) for a in ALGORITHMS if a.dask]
         + [(a, {}, 20.0, False) for a in ALGORITHMS])


def _case_id(case):
    alg, opts, eps, dask = case
    extra = [f"epsilon={eps:g}"] * (eps != EPS) + ["dask"] * dask
    return variant_id(alg, opts) + ("[" + ",".join(extra) + "]" if extra else "")


_RUNS = {}


def _release(case, X, seed):
    alg, opts, eps, dask = case
    return run(alg, _dask(X) if dask else X, K, seed=seed, epsilon=eps, **opts)


def _runs_x0(case):
    "The releases on X0 under both seeds (computed once per case)."
    key = _case_id(case)
    if key not in _RUNS: _RUNS[key] = [_release(case, X0.copy(), s) for s in SEEDS]
    return _RUNS[key]


def _check_public(releases_x, release_y, what, more=None):
    cx = [r.contract.as_dict() for r in releases_x]
    assert "replace-one" in cx[0]["neighbouring"], f"{what}: claims {cx[0]['neighbouring']!r}; this file tests replace-one"
    for c in cx[1:] + [release_y.contract.as_dict()]:
        _assert_same(cx[0], c, f"{what}: the contract")          # planned from public quantities: never moves
    diffs = _public_diffs([published(r)["extras"] for r in releases_x], published(release_y)["extras"],
                          more and (lambda i: published(more(i))["extras"]))
    assert not diffs, f"{what}: published extras depend on the data: " + "; ".join(diffs)


@pytest.mark.parametrize("kind", NEIGHBOURS)
@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_release_is_public(case, kind):
    _check_public(_runs_x0(case), _release(case, _neighbour(X0, kind), SEED), f"{_case_id(case)} ({kind} neighbour)",
                  more=lambda i: _release(case, X0.copy(), SEEDS[-1] + 1 + i))


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_release_is_noisy(case):
    "Not idle: what is released (the value, or its extras where post-processing zeroes the value) moves with the seed."
    a, b = _runs_x0(case)
    assert _moves(a, b), f"{_case_id(case)}: the same release under two seeds"


def _moves(a, b):
    return bool(diff(np.asarray(a.value), np.asarray(b.value)) or diff(a.extras, b.extras))


# --- the building blocks with a release of their own (public functions that are not registered algorithms) ---

def _blocks():
    from dppca_nb.privacy import releases as MEC
    from dppca_nb.privacy import centering as CE
    from dppca_nb.algorithms import local as LOC, robust as RB, smooth as SM
    from dppca_nb.backends.statistics import clip_rows as clip
    rr = lambda s: dict(random_state=s, return_release=True)

    def moment(X):
        Xc, c = clip(X)
        return dict(M=Xc.T @ Xc, n=N, n_clipped=c)

    def local_release(X, s):
        agg = LOC.LocalAggregator(P)
        agg.add_many(LOC.randomize_records(X, EPS, DLT, packed=True, random_state=s))
        return LOC.local_second_moment_release(agg, EPS, DLT, return_release=True)

    def mean_statistic(X, model="central", delta=DLT):
        Xc, c = clip(X)
        return lambda s: CE.plan_private_mean(N, P, EPS, delta, model=model).release(
            X, s, statistic=dict(row_sum=Xc.sum(axis=0), n=N, n_clipped=c))

    out = {}
    for opts in ({}, dict(sensitivity_rule="loose"), dict(sensitivity_rule="paper"), dict(radius=2.0),
                 dict(noise="discrete_gaussian")):
        out["gaussian_second_moment" + str(opts or "")] = (lambda o: lambda X, s: MEC.gaussian_second_moment(X, EPS, DLT, **o, **rr(s)))(opts)
        out["local_second_moment" + str(opts or "")] = (lambda o: lambda X, s: LOC.local_second_moment(X, EPS, DLT, **o, **rr(s)))(opts)
    out.update({
        "gaussian_second_moment[dask]": lambda X, s: MEC.gaussian_second_moment(_dask(X), EPS, DLT, **rr(s)),
        "plan_second_moment[statistic]": lambda X, s: MEC.plan_second_moment(N, P, EPS, DLT).release(X, s, statistic=moment(X)),
        "local_second_moment[per_record]": lambda X, s: LOC.local_second_moment(X, EPS, DLT, simulate="per_record", **rr(s)),
        "local_second_moment[dask]": lambda X, s: LOC.local_second_moment(_dask(X), EPS, DLT, **rr(s)),
        "local_second_moment_release": local_release,
        "smooth_sensitivity_release[gaussian]": lambda X, s: SM.smooth_sensitivity_release(moment(X)["M"] / N, N, K, EPS, DLT, **rr(s)),
        "smooth_sensitivity_release[cauchy]": lambda X, s: SM.smooth_sensitivity_release(moment(X)["M"] / N, N, K, EPS, 0.0, **rr(s)),
        "noisy_kendall": lambda X, s: RB.noisy_kendall(X, EPS, DLT, **rr(s)),
        "noisy_kendall[winsorized]": lambda X, s: RB.noisy_kendall(X, EPS, DLT, pair_transform="winsorized", **rr(s)),
        "noisy_kendall[private radius]": lambda X, s: RB.noisy_kendall(
            X, EPS, DLT, pair_transform="winsorized", winsorization_radius="private", **rr(s)),
        "noisy_kendall[discrete]": lambda X, s: RB.noisy_kendall(X, EPS, DLT, noise="discrete_gaussian", **rr(s)),
        "noisy_kendall[regular design]": lambda X, s: RB.noisy_kendall(X, EPS, DLT, design="regular", degree=4, **rr(s)),
        "noisy_kendall[dask, private radius]": lambda X, s: RB.noisy_kendall(
            _dask(X), EPS, DLT, pair_transform="winsorized", winsorization_radius="private", **rr(s)),
        "plan_winsorization_radius": lambda X, s: RB.plan_winsorization_radius(N, P, EPS).release(X, s),
        "private_mean[gaussian]": lambda X, s: CE.private_mean(X, EPS, DLT, **rr(s)),
        "private_mean[snapping]": lambda X, s: CE.private_mean(X, EPS, 0.0, **rr(s)),
        "private_mean[local]": lambda X, s: CE.private_mean(X, EPS, DLT, model="local", **rr(s)),
        "private_mean[dask]": lambda X, s: CE.private_mean(_dask(X), EPS, DLT, **rr(s)),
        "private_mean[local, dask]": lambda X, s: CE.private_mean(_dask(X), EPS, DLT, model="local", **rr(s)),
        "plan_private_mean[statistic]": lambda X, s: mean_statistic(X)(s),
        "plan_private_mean[statistic, local]": lambda X, s: mean_statistic(X, "local")(s),
    })
    return out


BLOCKS = _blocks()
# Not here, on purpose: kendall_tau, kendall_cross_sum, kendall_within_sum and backends.statistics compute the
# (non-private) statistics themselves; local_*_wishart simulate from a covariance, not from records;
# dp_threshold_postprocess only post-processes an already noisy matrix.


@pytest.mark.parametrize("kind", NEIGHBOURS)
@pytest.mark.parametrize("name", list(BLOCKS))
def test_building_block_is_public(name, kind):
    import warnings as w
    with w.catch_warnings():
        w.simplefilter("ignore")
        rx = [BLOCKS[name](X0.copy(), s) for s in SEEDS]
        ry = BLOCKS[name](_neighbour(X0, kind), SEED)
    _check_public(rx, ry, f"{name} ({kind} neighbour)", more=lambda i: BLOCKS[name](X0.copy(), SEEDS[-1] + 1 + i))
    assert _moves(*rx), f"{name}: the same release under two seeds"


# --- estimators -------------------------------------------------------------------------------------------
# Every estimator generated from the registry, with its defaults and the variants that buy something privately
# (a private radius, private or no centering, k chosen from released eigenvalues, an algorithm's own private
# option): privacy_ must be identical on neighbours, and so must every fitted attribute that does not move with the
# seed. `diagnostics_not_private_` is the curator's, by name not published.

def _est_cases():
    from dppca_nb.estimators import ESTIMATORS
    out = []
    for alg in ALGORITHMS:
        if not alg.estimator: continue
        params = ESTIMATORS[alg.estimator]().get_params()
        cases = [{}]
        if "radius_factor" in params and "radius" in params: cases.append(dict(radius="private"))
        if not alg.location_invariant:
            cases += [dict(centering=c) for c in ("none", "private") if params.get("centering") != c]
            if "mean_radius" in params: cases.append(dict(radius=2.0, centering="private", mean_radius=3.0))
        if alg.eigenvalues and "n_components" in params: cases.append(dict(n_components=0.7))
        cases += [v for v in variants(alg, N, P, K) if "private" in v.values() and v not in cases]
        out += [(alg.estimator, c, alg.quick) for c in cases]
    return out


EST_CASES = _est_cases()


def _fitted(est):
    out = {}
    for k, v in vars(est).items():
        if k.endswith("_") and not k.startswith("_") and k != "diagnostics_not_private_":
            if k == "accountant_": v = list(v.ledger)      # what was spent: a list of Spend records
            out[k] = v
    return out


def _fit(case, X, seed):
    from dppca_nb.estimators import ESTIMATORS
    name, params, quick = case
    cls = ESTIMATORS[name]
    kw_ = {**{k: v for k, v in quick.items() if k in cls().get_params()}, **params}
    if "n_components" in cls().get_params(): kw_.setdefault("n_components", K)
    import warnings as w
    with w.catch_warnings():
        w.simplefilter("ignore")
        return cls(random_state=seed, **kw_).fit(X)


def _est_id(c):
    return c[0] + ("" if not c[1] else "[" + ",".join(f"{k}={v}" for k, v in c[1].items()) + "]")


_FITS = {}


@pytest.mark.parametrize("kind", NEIGHBOURS)
@pytest.mark.parametrize("case", EST_CASES, ids=[_est_id(c) for c in EST_CASES])
def test_estimator_is_public(case, kind):
    key = _est_id(case)
    if key not in _FITS: _FITS[key] = [_fit(case, X0.copy(), s) for s in SEEDS]
    a, a2 = _FITS[key]
    b = _fit(case, _neighbour(X0, kind), SEED)
    assert "replace-one" in str(a.privacy_.get("neighbouring", "")), a.privacy_.get("neighbouring")
    _assert_same(a.privacy_, b.privacy_, f"{key}.privacy_ ({kind} neighbour)")
    diffs = _public_diffs([_fitted(a), _fitted(a2)], _fitted(b), lambda i: _fitted(_fit(case, X0.copy(), SEEDS[-1] + 1 + i)))
    assert not diffs, f"{key} fitted attributes ({kind} neighbour): published values depend on the data: " + "; ".join(diffs)


@pytest.mark.parametrize("kind", NEIGHBOURS)
@pytest.mark.parametrize("params", [{}, dict(bounds=([-1.0] * P, [0.5] * P), with_std=False)], ids=["default", "vector-bounds"])
def test_scaler_is_public(params, kind):
    from dppca_nb.preprocessing import PrivateStandardScaler
    X, Y = _pair(kind)
    a, a2, b = (PrivateStandardScaler(random_state=s, **params).fit(Z) for Z, s in ((X, SEED), (X, SEED + 1), (Y, SEED)))
    assert "replace-one" in a.privacy_["neighbouring"]
    _assert_same(a.privacy_, b.privacy_, f"PrivateStandardScaler.privacy_ ({kind} neighbour)")
    diffs = _public_diffs([_fitted(a), _fitted(a2)], _fitted(b))
    assert not diffs, f"PrivateStandardScaler fitted attributes ({kind} neighbour): " + "; ".join(diffs)
    assert "mean_" in random_keys([_fitted(a), _fitted(a2)])      # not idle: the noisy means


# --- the command line --------------------------------------------------------------------------------------
# Every registered method by its command-line name, with --delta unless it is pure; a method that is pure when
# delta = 0 also without --delta.

CLI_CASES = ([(a.key.replace("_", "-"), a.measure != "pure") for a in ALGORITHMS]
             + [(a.key.replace("_", "-"), False) for a in ALGORITHMS if a.measure == "pure when delta = 0"])


def _run_cli(tmp, X, method, with_delta):
    "Run `dppca fit` in-process; (standard output, standard error, the sidecar record, the --out path given)."
    from dppca_nb import cli
    tmp.mkdir()
    data, out = tmp / "data.csv", tmp / "components.csv"
    np.savetxt(data, X, delimiter=",", fmt="%.17g")        # exact round trip of the floats
    args = ["fit", str(data), "--method", method, "-k", str(K), "--epsilon", str(EPS), "--out", str(out),
            "--seed", str(SEED)] + (["--delta", str(DLT)] if with_delta else [])
    so, se = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
        rc = cli.main(args)
    assert rc == 0, se.getvalue()
    return so.getvalue(), se.getvalue(), json.loads(Path(f"{out}.json").read_text(encoding="utf-8")), str(out)


@pytest.mark.parametrize("kind", NEIGHBOURS)
@pytest.mark.parametrize("case", CLI_CASES, ids=[m + ("" if d else "[delta=0]") for m, d in CLI_CASES])
def test_cli_prints_only_public(case, kind, tmp_path):
    """Standard output and standard error are functions of the sidecar record alone (the result printed from it, its
    warnings), and on neighbouring data the record is identical but for `released` (the private values)."""
    from dppca_nb.cli import result_text
    method, with_delta = case
    X, Y = _pair(kind)
    runs = [_run_cli(tmp_path / name, Z, method, with_delta) for name, Z in (("a", X), ("b", Y))]
    assert runs[0][0].strip(), "the CLI printed nothing"
    (_, _, rec_a, _), (_, _, rec_b, _) = runs
    public_a, public_b = ({k: v for k, v in r.items() if k != "released"} for r in (rec_a, rec_b))
    assert public_a == public_b, f"dppca fit --method {method}: the record's public part depends on the data"
    for out, err, rec, path in runs:
        assert out == result_text(rec, path) + "\n", f"{method}: standard output is not the record's result_text"
        warned = [f"dppca fit: warning: {w}" for w in rec["warnings"] + rec["released"]["warnings"]]
        assert err.splitlines() == warned, f"{method}: standard error is more than the record's warnings:\n{err}"


# --- the picture releases ------------------------------------------------------------------------------------------
# A scree or a score plot releases neither a subspace nor a covariance: the pictures have a table of their own
# (dppca_nb.algorithms.pictures.picture_releases()), each entry with its planner, its option variants and public inputs
# for a test release (a fixed basis and centre, fixed group codes). The same checks as above, read from that table.

def _picture_cases():
    from dppca_nb.algorithms.pictures import picture_releases
    return [(e, v) for e in picture_releases().values() for v in e.variants]


PICTURE_CASES = _picture_cases()
_PICTURE_RUNS = {}


def _picture_id(case):
    e, v = case
    return e.key + ("" if not v else "[" + ",".join(f"{k}={x}" for k, x in v.items()) + "]")


def _picture_release(case, X, seed):
    e, v = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return e.planner(N, P, K, EPS, DLT, **v).release(X, seed, **e.inputs(N, P, K))


def test_picture_table_is_read():
    "Not idle: the scree's three methods and both histograms are in the table."
    ids = {_picture_id(c) for c in PICTURE_CASES}
    assert {"private_scree", "private_scree[method=pmwm]", "private_scree[method=huber]", "private_scores",
            "private_scores[variant=sparse]"} <= ids


@pytest.mark.parametrize("kind", NEIGHBOURS)
@pytest.mark.parametrize("case", PICTURE_CASES, ids=[_picture_id(c) for c in PICTURE_CASES])
def test_picture_release_is_public(case, kind):
    key = _picture_id(case)
    if key not in _PICTURE_RUNS: _PICTURE_RUNS[key] = [_picture_release(case, X0.copy(), s) for s in SEEDS]
    rx = _PICTURE_RUNS[key]
    _check_public(rx, _picture_release(case, _neighbour(X0, kind), SEED), f"{key} ({kind} neighbour)",
                  more=lambda i: _picture_release(case, X0.copy(), SEEDS[-1] + 1 + i))
    assert _moves(*rx), f"{key}: the same release under two seeds"
