"""Bad input, everywhere: every public algorithm function and estimator rejects malformed data and parameters
with a ValueError or TypeError that names the argument, and never modifies the caller's arrays.

Functions whose module has not landed are skipped (import-guarded); `test_inventory` lists them.
Hypothesis property tests draw shapes and values; the whole file runs in well under a minute.
"""
import importlib
import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

warnings.filterwarnings("ignore", category=RuntimeWarning)

# The entry points: every algorithm of the registry (dppca_nb.algorithms.registry: one registration adds it here),
# plus the building blocks that are public functions without an entry of their own.
#   kinds: "XkED" f(X, k, epsilon, delta) -> p x k;  "XE D" f(X, epsilon, delta) -> matrix;  "XkE" f(X, k, epsilon);
#          "XE" f(X, epsilon);  "X" f(X)
try:
    from dppca_nb.algorithms.registry import algorithms
    REGISTRY = dict(algorithms())          # every module imported: each registers its own algorithms
except ImportError:
    REGISTRY = {}


def _kind(alg):
    if alg.output == "covariance":
        return "XED"
    return "XkE" if alg.measure == "pure" else "XkED"


FUNCTIONS = [(a.function.__module__, a.key, _kind(a), dict(a.quick)) for a in REGISTRY.values()] + [
    ("dppca_nb.privacy.releases", "gaussian_second_moment", "XED", {}),
    ("dppca_nb.algorithms.local", "local_second_moment", "XED", {}),
    ("dppca_nb.algorithms.robust", "noisy_kendall", "XED", {}),
    ("dppca_nb.algorithms.kendall", "kendall_tau", "X", {}),
]
# functions with a `radius` argument that bounds the rows (a negative radius must be refused)
RADIUS = {a.key for a in REGISTRY.values() if "radius" in a.options} | {"gaussian_second_moment"}
# functions for which delta = 0 is legitimate (pure DP variant)
DELTA_ZERO_OK = {a.key for a in REGISTRY.values() if a.measure == "pure when delta = 0"}


def test_registry_table():
    "The table really comes from the registry, and the registry's plans refuse a bad budget naming it."
    if not REGISTRY:
        pytest.skip("dppca_nb.algorithms.registry not landed")
    assert len(REGISTRY) >= 10                                  # every module registered its algorithms
    assert {a.output for a in REGISTRY.values()} == {"subspace", "covariance"}
    assert {a.model for a in REGISTRY.values()} == {"central", "local"}
    for alg in REGISTRY.values():
        d = 0.0 if alg.measure == "pure" else 1e-5
        for eps in (0, -1.0, math.inf, math.nan, "1"):
            with pytest.raises((ValueError, TypeError), match="epsilon"):
                alg.plan(20, 4, 1, eps, d, **alg.quick)
        if alg.measure == "approximate":
            for dlt in (0.0, 1.0, -1e-3, math.nan):
                with pytest.raises((ValueError, TypeError), match="delta"):
                    alg.plan(20, 4, 1, 1.0, dlt, **alg.quick)
        with pytest.raises((ValueError, TypeError), match=r"\bk\b"):
            alg.plan(20, 4, 5, 1.0, d, **alg.quick)


def _load(mod, name):
    try:
        return getattr(importlib.import_module(mod), name)
    except (ImportError, AttributeError):
        return None


AVAILABLE = [(m, n, kind, kw, _load(m, n)) for m, n, kind, kw in FUNCTIONS]
LANDED = [a for a in AVAILABLE if a[4] is not None]
MISSING = [f"{m}.{n}" for m, n, _, _, f in AVAILABLE if f is None]

try:
    from dppca_nb import estimators as _est
    ESTIMATORS = _est.available_estimators()
except ImportError:
    ESTIMATORS = {}


def _call(entry, X, *, k=1, epsilon=1.0, delta=1e-5, **over):
    _, name, kind, kw, f = entry
    kw = {**kw, **over}
    if kind == "XkED":
        return f(X, k, epsilon, delta, random_state=0, **kw)
    if kind == "XkE":
        return f(X, k, epsilon, random_state=0, **kw)
    if kind == "XED":
        return f(X, epsilon, delta, random_state=0, **kw)
    if kind == "XE":
        return f(X, epsilon, random_state=0, **kw)
    return f(X, **kw)


def _ids(entries):
    return [e[1] for e in entries]


GOOD = np.random.default_rng(0).normal(size=(12, 4)) * 0.4
BAD_X = {
    "nan": np.where(np.eye(12, 4, dtype=bool), np.nan, GOOD),
    "inf": np.where(np.eye(12, 4, dtype=bool), np.inf, GOOD),
    "complex": GOOD * (1 + 1j),
    "strings": np.array([["a", "b", "c", "d"]] * 12),
    "object strings": np.array([["1", 2, None, "x"]] * 12, dtype=object),
    "1-D": GOOD[:, 0],
    "3-D": GOOD.reshape(12, 2, 2),
    "empty": np.empty((0, 4)),
    "no columns": np.empty((12, 0)),
    "one row": GOOD[:1],
    "None": None,
}


def test_inventory():
    "Lists the functions not (yet) present; the rest are tested below."
    if MISSING:
        pytest.skip("not landed, not tested: " + ", ".join(MISSING))


@pytest.mark.parametrize("entry", LANDED, ids=_ids(LANDED))
def test_valid_call_and_read_only(entry):
    X = GOOD.copy()
    X.setflags(write=False)
    out = _call(entry, X)
    np.testing.assert_array_equal(X, GOOD)           # the caller's array is untouched
    out = out[0] if isinstance(out, tuple) else out
    if entry[2] in ("XkED", "XkE"):
        V = np.asarray(out)
        assert V.shape == (4, 1) and np.allclose(V.T @ V, 1.0)


@pytest.mark.parametrize("case", list(BAD_X), ids=list(BAD_X))
@pytest.mark.parametrize("entry", LANDED, ids=_ids(LANDED))
def test_bad_data(entry, case):
    with pytest.raises((ValueError, TypeError), match=r"\bX\b"):
        _call(entry, BAD_X[case])


@pytest.mark.parametrize("entry", [e for e in LANDED if e[2] in ("XkED", "XkE")],
                         ids=_ids([e for e in LANDED if e[2] in ("XkED", "XkE")]))
@pytest.mark.parametrize("k", [0, 5, -1, 1.5, "2", None, True])
def test_bad_k(entry, k):
    with pytest.raises((ValueError, TypeError), match=r"\bk\b"):
        _call(entry, GOOD, k=k)


EPS_ENTRIES = [e for e in LANDED if e[2] != "X"]


@pytest.mark.parametrize("entry", EPS_ENTRIES, ids=_ids(EPS_ENTRIES))
@pytest.mark.parametrize("epsilon", [0, -1.0, math.inf, math.nan, "1", None, 1j])
def test_bad_epsilon(entry, epsilon):
    with pytest.raises((ValueError, TypeError), match="epsilon"):
        _call(entry, GOOD, epsilon=epsilon)


DELTA_ENTRIES = [e for e in LANDED if e[2] in ("XkED", "XED")]


@pytest.mark.parametrize("entry", DELTA_ENTRIES, ids=_ids(DELTA_ENTRIES))
@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-3, 1.5, math.nan, math.inf, "0.1", None])
def test_bad_delta(entry, delta):
    if delta == 0.0 and entry[1] in DELTA_ZERO_OK:
        return
    with pytest.raises((ValueError, TypeError), match="delta"):
        _call(entry, GOOD, delta=delta)


RADIUS_ENTRIES = [e for e in LANDED if e[1] in RADIUS]


@pytest.mark.parametrize("entry", RADIUS_ENTRIES, ids=_ids(RADIUS_ENTRIES))
@pytest.mark.parametrize("radius", [-1.0, 0.0, math.nan, math.inf, "1"])
def test_bad_radius(entry, radius):
    with pytest.raises((ValueError, TypeError), match="radius"):
        _call(entry, GOOD, radius=radius)


def test_bad_radius_winsorized():
    for entry in LANDED:
        if entry[1] in ("g_dppca", "noisy_kendall", "kendall_tau"):
            with pytest.raises((ValueError, TypeError), match="winsorization_radius"):
                _call(entry, GOOD, pair_transform="winsorized", winsorization_radius=-1.0)


def test_local_randomizer_bad_record():
    f = _load("dppca_nb.algorithms.local", "randomize_record")
    if f is None:
        pytest.skip("dppca_nb.algorithms.local.randomize_record not landed")
    for bad in (np.array([np.nan, 1.0]), np.array([np.inf, 0.0]), np.ones((2, 2)), np.array([]), None,
                np.array([1j, 0]), np.array(["a", "b"])):
        with pytest.raises((ValueError, TypeError), match=r"\bx\b"):
            f(bad, 1.0, 1e-5)
    for eps in (0, -1, math.inf):
        with pytest.raises(ValueError, match="epsilon"):
            f(np.ones(2), eps, 1e-5)
    with pytest.raises(ValueError, match="delta"):
        f(np.ones(2), 1.0, 1.0)
    x = np.array([3.0, 4.0])
    x.setflags(write=False)
    f(x, 1.0, 1e-5, random_state=0)
    np.testing.assert_array_equal(x, [3.0, 4.0])


# --- the local model's family (local, fantope, local_sparse): each wrong argument named -------------------

def _local_family_cases():
    from dppca_nb.algorithms import local as L, local_sparse as LS, fantope as F
    from dppca_nb.theory import bounds as TB
    X = np.random.default_rng(0).normal(size=(60, 5)) * 0.3
    x = np.array([0.6, 0.8, 0, 0, 0])
    full = L.LocalAggregator(3).add_many(np.ones((4, 6)))
    S0 = np.eye(4) + 0.1
    Sig = np.diag([0.02, 0.01, 0.01])
    return [
        ("randomize_record noise_shape", lambda: L.randomize_record(x, 1.0, 1e-5, noise_shape="full"), "noise_shape: expected one of"),
        ("randomize_record noise", lambda: L.randomize_record(x, 1.0, 1e-5, noise="float"), "noise"),
        ("randomize_record old noise word", lambda: L.randomize_record(x, 1.0, 1e-5, noise="discrete"), "noise"),
        ("discrete calibration classic", lambda: L.randomize_record(x, 1.0, 1e-5, noise="discrete_gaussian", calibration="classic"), "calibration"),
        ("gaussian calibration zcdp", lambda: L.randomize_record(x, 1.0, 1e-5, calibration="zcdp"), "calibration: 'zcdp'"),
        ("sensitivity_rule number", lambda: L.local_noise_sigma(1.0, 1e-5, sensitivity_rule=1.0), "sensitivity_rule"),
        ("sensitivity_rule name", lambda: L.local_noise_sigma(1.0, 1e-5, sensitivity_rule="exact"), "sensitivity_rule"),
        ("randomizer radius", lambda: L.randomize_record(x, 1.0, 1e-5, radius=-1.0), "radius"),
        ("randomizer p", lambda: L.local_randomizer(3, 1.0, 1e-5).report(x), "x: expected 3"),
        ("aggregator empty", lambda: L.LocalAggregator(3).estimate(), "no reports"),
        ("aggregator report shape", lambda: L.LocalAggregator(3).add(np.ones(4)), "report: expected shape (3, 3) or (6,)"),
        ("aggregator batch shape", lambda: L.LocalAggregator(3).add_many(np.ones((2, 4))), "reports: expected shape (m, 3, 3)"),
        ("aggregator non-finite", lambda: L.LocalAggregator(2).add([np.nan, 0, 0]), "finite"),
        ("aggregator p = 0", lambda: L.LocalAggregator(0), "p: expected a positive integer"),
        ("aggregator p = True", lambda: L.LocalAggregator(True), "p: expected a positive integer"),
        ("aggregator merge", lambda: L.LocalAggregator(2).merge(L.LocalAggregator(3)), "other"),
        ("server not an aggregator", lambda: L.local_second_moment_release(np.eye(3), 1.0, 1e-5), "agg"),
        ("server no reports", lambda: L.local_second_moment_release(L.LocalAggregator(3), 1.0, 1e-5), "agg"),
        ("server delta", lambda: L.local_second_moment_release(full, 1.0, 0.0), "delta"),
        ("plan reports count", lambda: L.plan_local_second_moment(5, 3, 1.0, 1e-5).release(None, reports=full), "reports: the plan was made for n = 5"),
        ("plan moment shape", lambda: L.plan_local_second_moment(5, 3, 1.0, 1e-5).release(None, moment=np.eye(4)), "moment"),
        ("plan moment discrete", lambda: L.plan_local_second_moment(5, 3, 1.0, 1e-5, noise="discrete_gaussian").release(None, moment=np.eye(3)), "moment"),
        ("k too large", lambda: L.local_gaussian_pca(X, 6, 1.0, 1e-5), "k: expected"),
        ("simulate", lambda: L.local_gaussian_pca(X, 2, 1.0, 1e-5, simulate="fast"), "simulate: expected one of"),
        ("chunk_size 0", lambda: L.local_gaussian_pca(X, 2, 1.0, 1e-5, simulate="per_record", chunk_size=0), "chunk_size"),
        ("chunk_size bool", lambda: L.local_gaussian_pca(X, 2, 1.0, 1e-5, chunk_size=True), "chunk_size: expected"),
        ("delta", lambda: L.local_gaussian_pca(X, 2, 1.0, 2.0), "delta"),
        ("discrete aggregate", lambda: L.local_second_moment(X, 1.0, 1e-5, noise="discrete_gaussian", simulate="aggregate"), "simulate: 'aggregate'"),
        ("wishart n", lambda: L.local_gaussian_pca_wishart(Sig, 1.5, 1, 1.0, 1e-5), "n: expected a positive integer"),
        ("wishart Sigma", lambda: L.local_gaussian_pca_wishart(np.ones((2, 3)), 100, 1, 1.0, 1e-5), "Sigma"),
        ("fantope_theta k", lambda: F.fantope_theta([1.0, 2.0], 3), "k: expected an integer in [1, 2]"),
        ("fantope_theta method", lambda: F.fantope_theta([1.0, 2.0], 1, method="newton"), "method"),
        ("fantope_projection square", lambda: F.fantope_projection(np.ones((2, 3)), 1), "square"),
        ("fantope_admm penalty", lambda: F.fantope_admm(S0, 2, -1.0), "penalty"),
        ("fantope_admm admm_step", lambda: F.fantope_admm(S0, 2, 0.1, admm_step=0.0), "admm_step"),
        ("fantope_admm alpha", lambda: F.fantope_admm(S0, 2, 0.1, alpha=2.5), "alpha"),
        ("fantope_admm warm_start", lambda: F.fantope_admm(S0, 2, 0.1, warm_start="x"), "warm_start"),
        ("fantope_admm k", lambda: F.fantope_admm(S0, 0, 0.1), "k: expected"),
        ("fantope_admm max_iter bool", lambda: F.fantope_admm(S0, 2, 0.1, max_iter=True), "max_iter: expected a positive integer"),
        ("fantope_admm max_iter float", lambda: F.fantope_admm(S0, 2, 0.1, max_iter=10.5), "max_iter: expected a positive integer"),
        ("sparse_penalty kind", lambda: LS.sparse_penalty(10, 5, 1.0, kind="tiny"), "kind"),
        ("sparse_penalty n", lambda: LS.sparse_penalty(0, 5, 1.0), "n"),
        ("local_sparse penalty", lambda: LS.local_sparse_pca(X, 2, 1.0, 1e-4, penalty=-1.0), "penalty"),
        ("local_sparse penalty rule", lambda: LS.local_sparse_pca(X, 2, 1.0, 1e-4, penalty="big"), "penalty: expected one of"),
        ("local_sparse k", lambda: LS.local_sparse_pca(X, 6, 1.0, 1e-4), "k: expected"),
        ("local_sparse output", lambda: LS.local_sparse_pca(X, 2, 1.0, 1e-4, output="Z"), "output"),
        ("local_sparse tol", lambda: LS.local_sparse_pca(X, 2, 1.0, 1e-4, tol=0.0), "tol"),
        ("local_critical_n eigengap", lambda: TB.local_critical_n(40, 0.0, 0.5, 1e-4), "eigengap"),
        ("local_error_prediction eigenvalues", lambda: TB.local_error_prediction(1e6, 5, 2, 0.1, 1.0, eigenvalues=[1.0, 0.5]), "eigenvalues: expected 5"),
        ("clipped_rows_bound radius", lambda: TB.clipped_rows_bound(Sig, 10, radius=0.0), "radius"),
    ]


def test_local_family_bad_arguments():
    "Every wrong argument of the local family's functions is refused with a message naming it, before any data are read."
    try:
        cases = _local_family_cases()
    except ImportError as e:
        pytest.skip(f"the local family has not landed: {e}")
    for name, call, match in cases:
        with pytest.raises((ValueError, TypeError), match=re.escape(match)):
            call()


# --- regressions: bugs these tests found in kendall_tau (fixed; kept as regular tests) -----------------

@pytest.mark.parametrize("X", [np.zeros((2, 2)), np.r_[np.zeros((5, 2)), [[1.0, 0.0]]]], ids=["all zero", "5 duplicates"])
def test_kendall_duplicates_regression(X):
    f = _load("dppca_nb.algorithms.kendall", "kendall_tau")
    if f is None:
        pytest.skip("not landed")
    with np.errstate(all="ignore"):
        assert np.isfinite(f(X)).all()


@pytest.mark.parametrize("scale", [1e200, 1e-300])
def test_kendall_extreme_scale_regression(scale):
    f = _load("dppca_nb.algorithms.kendall", "kendall_tau")
    if f is None:
        pytest.skip("not landed")
    X = np.random.default_rng(0).normal(size=(8, 3)) * scale
    with np.errstate(all="ignore"):
        assert np.isfinite(f(X)).all()


# --- property tests -------------------------------------------------------------------------------

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False, width=64)
shapes = st.tuples(st.integers(2, 9), st.integers(2, 5))
FAST = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                        HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("entry", LANDED, ids=_ids(LANDED))
@FAST
@given(data=st.data())
def test_property_finite_input(entry, data):
    "Any finite matrix of any small shape: no crash, finite output, input untouched, output shape/orthonormality."
    n, p = data.draw(shapes)
    X = data.draw(hnp.arrays(np.float64, (n, p), elements=finite))
    k = data.draw(st.integers(1, p - 1 if entry[1] == "smooth_sensitivity_pca" else p))
    X0 = X.copy()
    X.setflags(write=False)
    out = _call(entry, X, k=k)
    np.testing.assert_array_equal(X, X0)
    out = out[0] if isinstance(out, tuple) else out
    if isinstance(out, float):
        assert math.isfinite(out)
        return
    out = np.asarray(out, dtype=np.float64)
    assert np.isfinite(out).all(), f"{entry[1]} returned non-finite values on finite input"
    if entry[2] in ("XkED", "XkE"):
        assert out.shape == (p, k)
        np.testing.assert_allclose(out.T @ out, np.eye(k), atol=1e-8)


SCALE_ENTRIES = list(LANDED)


@pytest.mark.parametrize("entry", SCALE_ENTRIES, ids=_ids(SCALE_ENTRIES))
@FAST
@given(data=st.data())
def test_property_extreme_scales(entry, data):
    "Finite data at extreme scales (overflowing or underflowing squares) still gives a finite, orthonormal output."
    n, p = data.draw(shapes)
    scale = data.draw(st.sampled_from([1e-300, 1e-160, 1e160, 1e250]))
    X = data.draw(hnp.arrays(np.float64, (n, p), elements=st.floats(-10, 10))) * scale
    with np.errstate(all="ignore"):
        out = _call(entry, X, k=1)
    out = out[0] if isinstance(out, tuple) else out
    assert np.isfinite(np.asarray(out, dtype=np.float64)).all()


@pytest.mark.parametrize("entry", LANDED, ids=_ids(LANDED))
@FAST
@given(data=st.data())
def test_property_one_bad_entry(entry, data):
    "A single NaN, inf or -inf anywhere in an otherwise valid matrix is refused, naming X."
    n, p = data.draw(shapes)
    X = data.draw(hnp.arrays(np.float64, (n, p), elements=st.floats(-10, 10)))
    i, j = data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, p - 1))
    X[i, j] = data.draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    with pytest.raises(ValueError, match=r"\bX\b"):
        _call(entry, X)


@pytest.mark.parametrize("entry", EPS_ENTRIES, ids=_ids(EPS_ENTRIES))
@FAST
@given(eps=st.one_of(st.floats(max_value=0.0), st.just(math.inf), st.just(-math.inf), st.just(math.nan)))
def test_property_nonpositive_epsilon(entry, eps):
    with pytest.raises((ValueError, TypeError), match="epsilon"):
        _call(entry, GOOD, epsilon=eps)


@pytest.mark.parametrize("entry", DELTA_ENTRIES, ids=_ids(DELTA_ENTRIES))
@FAST
@given(delta=st.one_of(st.floats(max_value=-1e-300), st.floats(min_value=1.0), st.just(math.nan)))
def test_property_delta_outside_unit_interval(entry, delta):
    with pytest.raises((ValueError, TypeError), match="delta"):
        _call(entry, GOOD, delta=delta)


# --- estimators ------------------------------------------------------------------------------------

EST_NAMES = list(ESTIMATORS)


def _est(name, **kw):
    cls = ESTIMATORS[name]
    if name != "DPThresholdCovariance":
        kw.setdefault("n_components", 1)
    return cls(random_state=0, **kw)


@pytest.mark.parametrize("case", list(BAD_X), ids=list(BAD_X))
@pytest.mark.parametrize("name", EST_NAMES)
def test_estimator_bad_data(name, case):
    with pytest.raises((ValueError, TypeError), match=r"\bX\b"):
        _est(name).fit(BAD_X[case])


@pytest.mark.parametrize("name", EST_NAMES)
def test_estimator_bad_parameters(name):
    cls = ESTIMATORS[name]
    params = cls().get_params()
    cases = [("epsilon", v) for v in (0, -1.0, -math.inf, math.nan, "1")]    # math.inf: the non-private limit
    if "delta" in params:
        cases += [("delta", v) for v in (1.0, -0.5, 2.0, "x")]
        if name != "SmoothSensitivityPCA":
            cases.append(("delta", 0.0))
    if "n_components" in params:
        cases += [("n_components", v) for v in (0, 5, -2, 1.5, "max")]
    if "radius" in params:
        cases += [("radius", v) for v in (-1.0, 0.0)]
        cases += [("radius", v) for v in ("median", math.inf)]          # None: the default bound (2 or 1)
    if "mean_radius" in params:
        cases += [("mean_radius", v) for v in (-1.0, "mean")]
    if "radius_factor" in params:              # a private radius: its share, quantile, factor and public range
        cases += [("radius_share", v) for v in (0.0, 1.0)] + [("radius_quantile", v) for v in (0.0, 1.5)]
        cases += [("radius_factor", -2.0)] + [("radius_bounds", v) for v in ((2.0, 1.0), "wide", (0.0, 1.0))]
    if "location" in params:
        cases += [("location", "median"), ("location_share", 0.0), ("location_share", 1.0)]
    if "order_share" in params:
        cases += [("order_share", v) for v in (-0.1, 1.0, "half")]
    if "whiten" in params:
        cases += [("whiten", "yes")]
    if "accountant" in params:
        cases += [("accountant", "budget")]
    cases += [("centering", "median")]
    if "mean_share" in params:
        cases += [("mean_share", v) for v in (0.0, 1.0, -0.1)]
    for arg, value in cases:
        kw = {arg: value}
        if arg in ("mean_share", "mean_radius"):
            kw["centering"] = "private"
        if arg.startswith("radius_"):
            kw["radius"] = "private"
        with pytest.raises((ValueError, TypeError), match=arg):
            _est(name, **kw).fit(GOOD)


@pytest.mark.parametrize("name", EST_NAMES)
def test_estimator_read_only_and_transform(name):
    X = GOOD.copy()
    X.setflags(write=False)
    est = _est(name).fit(X)
    np.testing.assert_array_equal(X, GOOD)
    if hasattr(est, "transform"):
        Z = est.transform(X)
        np.testing.assert_array_equal(X, GOOD)
        assert Z.shape == (12, 1)
        with pytest.raises(ValueError, match=r"\bX\b"):
            est.transform(GOOD[:, :3])                       # wrong number of features
        with pytest.raises(ValueError, match=r"\bX\b"):
            est.transform(np.where(np.eye(12, 4, dtype=bool), np.nan, GOOD))


@pytest.mark.parametrize("name", EST_NAMES)
@FAST
@given(data=st.data())
def test_estimator_property_finite_input(name, data):
    n, p = data.draw(shapes)
    X = data.draw(hnp.arrays(np.float64, (n, p), elements=finite))
    X0 = X.copy()
    X.setflags(write=False)
    est = ESTIMATORS[name](random_state=0).fit(X)
    np.testing.assert_array_equal(X, X0)
    if hasattr(est, "components_"):
        C = est.components_
        assert np.isfinite(C).all()
        np.testing.assert_allclose(C @ C.T, np.eye(C.shape[0]), atol=1e-8)
    else:
        assert np.isfinite(est.covariance_).all()


# --- accounting ------------------------------------------------------------------------------------

def test_accounting_bad_input():
    acc = pytest.importorskip("dppca_nb.privacy.accounting")
    for bad in (0, -1, math.inf, math.nan, "1"):
        with pytest.raises((ValueError, TypeError), match="epsilon"):
            acc.PrivacyAccountant(bad, 1e-5)
        with pytest.raises((ValueError, TypeError), match="epsilon"):
            acc.split_budget(bad, 1e-5, [1, 1])
    for bad in (1.0, -0.1, math.nan):
        with pytest.raises((ValueError, TypeError), match="delta"):
            acc.PrivacyAccountant(1.0, bad)
    with pytest.raises(ValueError, match="shares"):
        acc.split_budget(1.0, 1e-5, [1, -1])
    with pytest.raises(ValueError, match="over the declared budget"):
        a = acc.PrivacyAccountant(1.0, 1e-5)
        a.spend(0.6)
        a.spend(0.6)


# --- the sparse-covariance family and SGPCA: each wrong argument named -------------------------------------

def _sparse_cov_cases():
    from dppca_nb.data.datasets import block_covariance, banded_covariance, column_sparsity
    from dppca_nb.algorithms.sparse_cov import (threshold_level, hard_threshold, dp_threshold_postprocess,
                                                gaussian_covariance, dp_threshold_covariance)
    from dppca_nb.theory.bounds import threshold_error_bound, naive_error_bound, gaussian_gamma
    from dppca_nb.algorithms.baselines import sgpca
    A, S = np.eye(3), np.eye(4) * 0.1
    return {
        "block_size 0": (lambda: block_covariance(10, 0), "block_size: expected a positive integer"),
        "block_size > p": (lambda: block_covariance(10, 11), "block_size: expected an integer between 1 and p = 10"),
        "block_size bool": (lambda: block_covariance(10, True), "block_size: expected"),
        "correlation 1": (lambda: block_covariance(10, 3, correlation=1.0), r"correlation: expected values in \[0, 1\)"),
        "correlation per block": (lambda: block_covariance(10, 3, correlation=[0.1, 0.2]),
                                  "correlation: expected a number or 4 values"),
        "trace 2": (lambda: banded_covariance(10, 2, trace=2.0), r"trace: expected a number in \(0, 1\]"),
        "bandwidth -1": (lambda: banded_covariance(10, -1), "bandwidth"),
        "column_sparsity vector": (lambda: column_sparsity(np.ones(3)), "Sigma: expected a square matrix"),
        "column_sparsity tol": (lambda: column_sparsity(A, tol=-1.0), "tol"),
        "threshold n 0": (lambda: threshold_level(0, 5, 1.0), "n: expected a positive integer"),
        "threshold n float": (lambda: threshold_level(10.0, 5, 1.0), "n: expected"),
        "threshold sigma": (lambda: threshold_level(10, 5, -1.0), "sigma"),
        "threshold gamma": (lambda: threshold_level(10, 5, 1.0, gamma=-1.0), "gamma"),
        "threshold noise_constant": (lambda: threshold_level(10, 5, 1.0, noise_constant=-1.0), "noise_constant"),
        "hard_threshold shape": (lambda: hard_threshold(np.ones((2, 3)), 0.1), "A: expected a square matrix"),
        "hard_threshold tau": (lambda: hard_threshold(A, -0.1), "tau"),
        "hard_threshold tau_diagonal": (lambda: hard_threshold(A, 0.1, tau_diagonal=-1), "tau_diagonal"),
        "postprocess shape": (lambda: dp_threshold_postprocess(S[:2], 1.0, 1.0, n=100), "S_noisy"),
        "postprocess n 0": (lambda: dp_threshold_postprocess(S, 1.0, 1.0, n=0), "n:"),
        "postprocess n bool": (lambda: dp_threshold_postprocess(S, 1.0, 1.0, n=True), "n: expected a positive integer"),
        "postprocess gamma": (lambda: dp_threshold_postprocess(S, 1.0, 1.0, n=100, gamma=-1), "gamma"),
        "covariance rule": (lambda: gaussian_covariance(GOOD, 1.0, 1e-5, sensitivity_rule="sqrt2"), "sensitivity_rule"),
        "covariance noise": (lambda: gaussian_covariance(GOOD, 1.0, 1e-5, noise="discrete"), "noise"),
        "threshold covariance gamma": (lambda: dp_threshold_covariance(GOOD, 1.0, 1e-5, gamma=-1), "gamma"),
        "threshold covariance noise": (lambda: dp_threshold_covariance(GOOD, 1.0, 1e-5, noise="continuous"), "noise"),
        "bound s": (lambda: threshold_error_bound(100, 10, -1, 1.0, 1e-5), "s: expected"),
        "bound noise_shape": (lambda: naive_error_bound(100, 10, sigma=1.0, noise_shape="lower"), "noise_shape"),
        "bound rule": (lambda: naive_error_bound(100, 10, 1.0, 1e-5, sensitivity_rule="sqrt2"), "sensitivity_rule"),
        "gaussian_gamma": (lambda: gaussian_gamma(np.ones(3)), "Sigma: expected a square matrix"),
        "sgpca eigenvalue_share": (lambda: sgpca(GOOD, 2, 1.0, 1e-5, eigenvalue_share=1.0), "eigenvalue_share"),
        "sgpca calibration": (lambda: sgpca(GOOD, 2, 1.0, 1e-5, calibration="zcdp"), "calibration"),
    }


SPARSE_COV_CASES = list(_sparse_cov_cases())


@pytest.mark.parametrize("case", SPARSE_COV_CASES)
def test_sparse_cov_family_bad_argument(case):
    call, message = _sparse_cov_cases()[case]
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_dp_threshold_covariance_dask_bad_gamma():
    da = pytest.importorskip("dask.array")
    from dppca_nb.algorithms.sparse_cov import dp_threshold_covariance
    with pytest.raises(ValueError, match="gamma"):
        dp_threshold_covariance(da.from_array(GOOD, chunks=5), 1.0, 1e-5, gamma=-1)


# --- the samplers, pure DP and smooth sensitivity: their building blocks ----------------------------------------

def _pure_smooth_cases():
    "(label, callable, text the error must contain): every wrong argument of the building blocks, named."
    import dppca_nb.privacy.samplers as SA
    import dppca_nb.algorithms.pure as PU
    import dppca_nb.algorithms.smooth as SM
    import dppca_nb.data.datasets as DS
    Q = np.linalg.qr(np.random.default_rng(0).normal(size=(3, 3)))[0]
    A3 = Q @ np.diag([0.0, 1.0, 3.0]) @ Q.T
    X = np.random.default_rng(1).normal(size=(60, 4)) * 0.3
    U, V = np.eye(4)[:, :2], np.eye(4)[:, 1:3]
    D = np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    return [
        ("bingham: not square", lambda: SA.bingham_sample(np.ones((2, 3))), "A: expected a square matrix"),
        ("bingham: not symmetric", lambda: SA.bingham_sample(np.array([[0, 1], [0, 0.]])), "A: expected a symmetric"),
        ("bingham: not finite", lambda: SA.bingham_sample(np.array([[np.nan, 0], [0, 0.]])), "A: expected finite"),
        ("bingham: size 0", lambda: SA.bingham_sample(A3, size=0), "size: expected"),
        ("bingham: size 2.7", lambda: SA.bingham_sample(A3, size=2.7), "size: expected a positive integer"),
        ("bingham: size True", lambda: SA.bingham_sample(A3, size=True), "size: expected a positive integer"),
        ("bingham rate: n_proposals", lambda: SA.bingham_acceptance_rate(A3, n_proposals=100.5), "n_proposals: expected"),
        ("matrix bingham: k 0", lambda: SA.matrix_bingham_sample(A3, 0), "k: expected"),
        ("matrix bingham: k > p", lambda: SA.matrix_bingham_sample(A3, 4), "k: expected"),
        ("matrix bingham: flatten > k", lambda: SA.matrix_bingham_sample(A3, 2, flatten=3), "flatten: expected"),
        ("matrix bingham: flatten 0", lambda: SA.matrix_bingham_sample(A3, 2, flatten=0), "flatten: expected"),
        ("matrix bingham: max_trials", lambda: SA.matrix_bingham_sample(A3, 2, max_trials=0), "max_trials: expected"),
        ("matrix bingham: not square", lambda: SA.matrix_bingham_sample(np.ones((2, 3)), 1), "A: expected a square matrix"),
        ("matrix bingham rate: n_proposals", lambda: SA.matrix_bingham_acceptance_rate(A3, 2, n_proposals=0.5),
         "n_proposals: expected"),
        ("budget: share 1", lambda: PU.pure_dp_budget(1.0, 3, 1.0), "eigenvalue_share: expected"),
        ("budget: share word", lambda: PU.pure_dp_budget(1.0, 3, "thirds"), "eigenvalue_share"),
        ("budget: epsilon", lambda: PU.pure_dp_budget(-1.0, 3), "epsilon"),
        ("budget: k float", lambda: PU.pure_dp_budget(1.0, 2.0), "k: expected a positive integer"),
        ("pure: sensitivity_rule", lambda: PU.pure_dp_pca(X, 2, 1.0, sensitivity_rule="sqrt2"),
         "sensitivity_rule: expected one of"),
        ("pure: sensitivity_rule loose", lambda: PU.pure_dp_pca(X, 2, 1.0, sensitivity_rule="loose"), "sensitivity_rule"),
        ("pure: eigenvalue_share", lambda: PU.pure_dp_pca(X, 2, 1.0, eigenvalue_share=-0.1), "eigenvalue_share"),
        ("pure: radius", lambda: PU.pure_dp_pca(X, 2, 1.0, radius=0), "radius"),
        ("pure plan: delta", lambda: PU.plan_pure_dp_pca(60, 4, 2, 1.0, 1e-5), "delta"),
        ("subspace: radius", lambda: PU.pure_dp_subspace(X, 2, 1.0, radius=-1), "radius"),
        ("subspace: max_trials", lambda: PU.pure_dp_subspace(X, 2, 1.0, max_trials=0), "max_trials"),
        ("subspace: epsilon nan", lambda: PU.pure_dp_subspace(X, 2, float("nan")), "epsilon"),
        ("subspace plan: delta", lambda: PU.plan_pure_dp_subspace(60, 4, 2, 1.0, 1e-5), "delta"),
        ("audit statistic: direction", lambda: PU.pure_dp_audit_statistic(D, 1.0, direction=[1.0, 1.0]),
         "direction: expected a unit"),
        ("aligned distance: norm", lambda: SM.aligned_distance(U, V, norm="l3"), "norm"),
        ("aligned distance: shapes", lambda: SM.aligned_distance(U, np.eye(4)[:, :3]), "U, V: expected frames"),
        ("gap bound: norm", lambda: SM.eigengap_sensitivity_bound(0.1, 100, 8, 2, "fro"), "norm"),
        ("gap bound: n", lambda: SM.eigengap_sensitivity_bound(0.1, 0, 8, 2), "n: expected"),
        ("flip example: p bool", lambda: SM.flip_example(3, p=True), "p: expected an integer >= 2"),
        ("flip example: n float", lambda: SM.flip_example(2.5), "n: expected a positive integer"),
        ("smooth parameters: constants", lambda: SM.smooth_sensitivity_parameters(0.6, 0.0, 10, 2, constants="nrs"),
         "constants"),
        ("smooth parameters: delta", lambda: SM.smooth_sensitivity_parameters(1.0, -1e-5, 3, 1), "delta"),
        ("smooth parameters: epsilon", lambda: SM.smooth_sensitivity_parameters(0.0, 1e-5, 3, 1), "epsilon"),
        ("perturb frame: noise", lambda: SM.perturb_frame(U, 1.0, "laplace"), "noise"),
        ("perturb frame: scale", lambda: SM.perturb_frame(U, -1.0), "scale"),
        ("smooth release: n", lambda: SM.smooth_sensitivity_release(np.eye(4), 0, 2, 1.0, 1e-5), "n: expected a positive integer"),
        ("smooth: constants", lambda: SM.smooth_sensitivity_pca(X, 2, 1.0, 1e-5, constants="nrs"), "constants"),
        ("smooth: radius", lambda: SM.smooth_sensitivity_pca(X, 2, 1.0, 1e-5, radius=-2.0), "radius"),
        ("spherical spike: gap", lambda: DS.spherical_spike(10, 5, 1, 1.5), "gap"),
        ("spherical spike: k = p", lambda: DS.spherical_spike(10, 5, 5, 0.1), "k: expected k < p"),
        ("reference design: k", lambda: DS.reference_design(40, 50), "k: expected"),
        ("reference design: spike", lambda: DS.reference_design(40, 5, -1.0), "spike"),
        ("reference design: spike * k >= trace", lambda: DS.reference_design(40, 5, 0.1), "spike: expected spike * k < trace"),
    ]


def test_pure_smooth_building_blocks():
    "Each wrong argument of the samplers', pure DP's and smooth sensitivity's building blocks is refused, named."
    pytest.importorskip("dppca_nb.privacy.samplers")
    for label, fn, text in _pure_smooth_cases():
        with pytest.raises((ValueError, TypeError)) as err:
            fn()
        assert text in str(err.value), (label, str(err.value))


def test_smooth_dask_bad_input():
    "The Dask path of smooth-sensitivity PCA checks k and epsilon from the array's shape, before reading it."
    da = pytest.importorskip("dask.array")
    import dppca_nb.algorithms.smooth as SM
    Xd = da.from_array(np.random.default_rng(0).normal(size=(60, 10)) * 0.3, chunks=(20, 10))
    with pytest.raises((ValueError, TypeError), match=r"\bk\b"):
        SM.smooth_sensitivity_pca(Xd, 11, 1.0)
    with pytest.raises((ValueError, TypeError), match="epsilon"):
        SM.smooth_sensitivity_pca(Xd, 2, 0.0)


# --- the robust family: Kendall's tau and g-DPPCA, each wrong argument named ------------------------------

def _robust_cases():
    "(label, callable, text the error must contain): every wrong argument of the Kendall and g-DPPCA functions, named."
    import dppca_nb.algorithms.kendall as KE
    import dppca_nb.algorithms.robust as RB
    rng = np.random.default_rng(4)
    X, A, B = rng.standard_normal((30, 3)), rng.standard_normal((20, 7)), rng.standard_normal((15, 7))
    Xg = rng.standard_normal((400, 5))
    g = lambda **kw: RB.g_dppca(X, 2, 0.5, 1e-5, **kw)
    W = dict(pair_transform="winsorized", winsorization_radius="private")
    return [
        ("tau: pair_transform", lambda: KE.kendall_tau(X, "sph"), "pair_transform"),
        ("tau: radius with spherical", lambda: KE.kendall_tau(X, "spherical", winsorization_radius=1.0),
         "winsorization_radius: only used with pair_transform='winsorized'"),
        ("tau: negative radius", lambda: KE.kendall_tau(X, "winsorized", winsorization_radius=-1.0), "winsorization_radius"),
        ("tau: method", lambda: KE.kendall_tau(X, method="loop"), "method"),
        ("tau: block_rows 0", lambda: KE.kendall_tau(X, block_rows=0), "block_rows"),
        ("tau: block_rows float", lambda: KE.kendall_tau(X, block_rows=64.5), "block_rows: expected a positive integer"),
        ("tau: one row", lambda: KE.kendall_tau(X[:1]), "at least 2 rows"),
        ("tau: design", lambda: KE.kendall_tau(Xg, design="half"), "design"),
        ("tau: degree", lambda: KE.kendall_tau(Xg, design="regular", degree=400), "degree"),
        ("design: odd n, odd d", lambda: KE.kendall_design(11, "regular", 3), "degree: n = 11 is odd"),
        ("design: d > n - 1", lambda: KE.kendall_design(12, "regular", 12), "degree: expected at most n - 1 = 11"),
        ("design: d 0", lambda: KE.kendall_design(12, "regular", 0), "degree"),
        ("design: full with a degree", lambda: KE.kendall_design(10, "full", 4), "degree: the full design"),
        ("design: name", lambda: KE.kendall_design(10, "sparse"), "design"),
        ("cross sum: columns", lambda: KE.kendall_cross_sum(A, B[:, :3]), "B: expected 7 columns"),
        ("cross sum: B None", lambda: KE.kendall_cross_sum(A, None), "B:"),
        ("cross sum: radius with spherical", lambda: KE.kendall_cross_sum(A, B, "spherical", winsorization_radius=1.0),
         "winsorization_radius"),
        ("within sum: block_rows", lambda: KE.kendall_within_sum(A, block_rows=0), "block_rows"),
        ("cross sum: empty A", lambda: KE.kendall_cross_sum(np.zeros((0, 7)), B), "A:"),
        ("sensitivity: rule", lambda: RB.kendall_sensitivity("loose", n=10), "sensitivity_rule"),
        ("sensitivity: a number is not a rule", lambda: RB.kendall_sensitivity(0.5, n=10), "sensitivity_rule"),
        ("sensitivity: n 1", lambda: RB.kendall_sensitivity(n=1), "n:"),
        ("sensitivity: n bool", lambda: RB.kendall_sensitivity(n=True), "n: expected an integer >= 2"),
        ("sensitivity: n float", lambda: RB.kendall_sensitivity(n=300.0), "n: expected an integer >= 2"),
        ("radius plan: quantile", lambda: RB.plan_winsorization_radius(30, 3, 1.0, quantile=1.0), "radius_quantile"),
        ("radius plan: bounds order", lambda: RB.plan_winsorization_radius(30, 3, 1.0, bounds=(2.0, 1.0)), "radius_bounds"),
        ("radius plan: bounds not a pair", lambda: RB.plan_winsorization_radius(30, 3, 1.0, bounds=5.0),
         "radius_bounds: expected a pair"),
        ("radius plan: epsilon", lambda: RB.plan_winsorization_radius(30, 3, 0.0), "epsilon"),
        ("g-DPPCA: pair_transform", lambda: g(pair_transform="sph"), "pair_transform"),
        ("g-DPPCA: radius with spherical", lambda: g(winsorization_radius=2.0), "winsorization_radius"),
        ("g-DPPCA: private with spherical", lambda: g(winsorization_radius="private"), "winsorization_radius"),
        ("g-DPPCA: radius word", lambda: g(pair_transform="winsorized", winsorization_radius="auto"), "winsorization_radius"),
        ("g-DPPCA: radius_share", lambda: g(**W, radius_share=1.5), "radius_share"),
        ("g-DPPCA: radius_quantile", lambda: g(**W, radius_quantile=1.5), "radius_quantile"),
        ("g-DPPCA: radius_bounds", lambda: g(**W, radius_bounds=(3.0, 1.0)), "radius_bounds"),
        ("g-DPPCA: sensitivity_rule", lambda: g(sensitivity_rule="sqrt"), "sensitivity_rule"),
        ("g-DPPCA: zcdp for Gaussian noise", lambda: g(calibration="zcdp"), "calibration: 'zcdp'"),
        ("g-DPPCA: classic beyond its range", lambda: RB.g_dppca(X, 2, 10.0, 1e-5, calibration="classic"), "calibration"),
        ("g-DPPCA: classic for discrete noise", lambda: g(noise="discrete_gaussian", calibration="classic"), "calibration"),
        ("g-DPPCA: old noise token", lambda: g(noise="discrete"), "noise"),
        ("g-DPPCA: old noise token continuous", lambda: g(noise="continuous"), "noise"),
        ("g-DPPCA: odd n, odd d", lambda: RB.g_dppca(Xg[:101], 2, 1.0, 1e-5, design="regular", degree=3),
         "degree: n = 101 is odd"),
        ("g-DPPCA: degree", lambda: RB.g_dppca(Xg, 2, 1.0, 1e-5, design="regular", degree=400), "degree"),
        ("g-DPPCA: the estimator's old option name", lambda: g(transform="winsorized"), "transform"),
        ("noisy tau: delta", lambda: RB.noisy_kendall(X, 0.5, 0.0), "delta"),
    ]


ROBUST_CASES = [c[0] for c in _robust_cases()]


@pytest.mark.parametrize("label", ROBUST_CASES)
def test_robust_family_bad_argument(label):
    call, text = {c[0]: c[1:] for c in _robust_cases()}[label]
    with pytest.raises((ValueError, TypeError)) as err:
        call()
    assert text in str(err.value), (label, str(err.value))


def test_robust_family_read_only():
    "Read-only arrays are fine and untouched: the statistic, the pair sums and the release with a private radius."
    import dppca_nb.algorithms.kendall as KE
    import dppca_nb.algorithms.robust as RB
    X = np.random.default_rng(4).standard_normal((30, 3))
    X.setflags(write=False)
    X0 = X.copy()
    KE.kendall_tau(X, "winsorized", winsorization_radius=1.0)
    KE.kendall_cross_sum(X[:10], X[10:])
    RB.g_dppca(X, 2, 0.5, 1e-5, pair_transform="winsorized", winsorization_radius="private", random_state=0)
    np.testing.assert_array_equal(X, X0)


def test_robust_family_dask_bad_input():
    "The Dask paths name the bad argument too, and a non-finite row is reported by its block's task."
    da = pytest.importorskip("dask.array")
    import dppca_nb.algorithms.kendall as KE
    import dppca_nb.algorithms.robust as RB
    Xk = np.random.default_rng(8).standard_normal((900, 6))
    Xd = da.from_array(Xk, chunks=(250, 6))
    Xnan = Xk.copy(); Xnan[5, 3] = np.nan
    Xdn = da.from_array(Xnan, chunks=(250, 6))
    cases = [(lambda: KE.kendall_tau(Xd, "huber"), "pair_transform"),
             (lambda: KE.kendall_tau(Xd, "spherical", winsorization_radius=1.0), "winsorization_radius"),
             (lambda: KE.kendall_tau(Xd, method="pairwise"), "method"),
             (lambda: KE.kendall_tau(Xd, design="regular", method="pairwise"), "method"),
             (lambda: KE.kendall_tau(Xdn), "X: expected finite"),
             (lambda: KE.kendall_tau(Xdn, design="regular", random_state=0), "X: expected finite values, found 1 row"),
             (lambda: RB.g_dppca(Xdn, 3, 0.5, 1e-5, pair_transform="winsorized", winsorization_radius="private",
                                 random_state=9), "X: expected finite"),
             (lambda: RB.g_dppca(Xd, 3, 0.5, 1e-5, sensitivity_rule="sqrt"), "sensitivity_rule")]
    for call, text in cases:
        with pytest.raises((ValueError, TypeError)) as err:
            call()
        assert text in str(err.value), (text, str(err.value))


def test_robust_family_array_api_bad_input():
    "An array-API X (array_api_strict here, CuPy on a GPU): the same errors, named."
    xs = pytest.importorskip("array_api_strict")
    import dppca_nb.algorithms.kendall as KE
    rng = np.random.default_rng(0)
    Xh, A, B = rng.standard_normal((40, 7)), rng.standard_normal((20, 7)), rng.standard_normal((15, 7))
    Xsn = Xh.copy(); Xsn[7, 1] = np.inf
    cases = [(lambda: KE.kendall_tau(xs.asarray(Xsn)), "X: expected finite values, found 1 row"),
             (lambda: KE.kendall_tau(xs.asarray(Xh), method="pairwise"), "method: an array-API X"),
             (lambda: KE.kendall_tau(xs.asarray(Xh), "spherical", winsorization_radius=1.0), "winsorization_radius"),
             (lambda: KE.kendall_tau(xs.asarray(Xh[:1])), "X: expected at least 2 rows"),
             (lambda: KE.kendall_cross_sum(A, xs.asarray(B)), "A: expected an array of the same library as B"),
             (lambda: KE.kendall_cross_sum(xs.asarray(A), B), "B: expected an array of the same library as A")]
    for call, text in cases:
        with pytest.raises((ValueError, TypeError)) as err:
            call()
        assert text in str(err.value), (text, str(err.value))


def test_robust_estimator_bad_parameters():
    "RobustKendallPCA: its own options, and no private centering (the tau is translation invariant)."
    if "RobustKendallPCA" not in ESTIMATORS:
        pytest.skip("RobustKendallPCA not landed")
    for kw, text in ((dict(centering="private"), "centering"), (dict(pair_transform="sph"), "pair_transform"),
                     (dict(winsorization_radius=-1.0), "winsorization_radius"), (dict(radius_share=1.0), "radius_share"),
                     (dict(sensitivity_rule="loose"), "sensitivity_rule"), (dict(design="half"), "design"),
                     (dict(degree=0), "degree")):
        with pytest.raises((ValueError, TypeError), match=text):
            _est("RobustKendallPCA", **kw).fit(GOOD)


# --- subspace distances, rates, NSGGD's stopping rule ----------------------------------------------

def test_subspace_distance_bad_input():
    la = pytest.importorskip("dppca_nb.core.linalg")
    U = np.eye(5)[:, :2]
    for f in (la.subspace_distance, la.principal_angles, la.sin_theta_distance):
        with pytest.raises(ValueError, match="same number of rows"):
            f(U, np.eye(4)[:, :2])
        with pytest.raises(ValueError, match="V: expected finite"):
            f(U, np.full((5, 2), np.nan))
        with pytest.raises(ValueError, match="U: expected a p x k matrix"):
            f(np.zeros((5, 2, 1)), U)
    with pytest.raises(ValueError, match="same shape"):
        la.sin_theta_distance(U, np.eye(5)[:, :3])


def test_rate_class_bad_guarantee():
    b = pytest.importorskip("dppca_nb.theory.bounds")
    for bad in ("central", "", None, "Pure"):
        with pytest.raises(ValueError, match="guarantee"):
            b.theorem1_lower.rate_class.covers(bad)


@pytest.mark.parametrize("tol", [-1e-6, math.nan, math.inf, "0"])
def test_nsggd_bad_tol(tol):
    bl = pytest.importorskip("dppca_nb.algorithms.baselines")
    X = np.random.default_rng(0).standard_normal((20, 4))
    with pytest.raises((ValueError, TypeError), match="tol"):
        bl.nsggd(X, 1, 1.0, 1e-5, n_iter=2, tol=tol)


# --- every option of every registered algorithm and estimator, from the registry's parameter descriptions --------

BAD_VALUES = ("not-a-choice", -1.0, 0.0, 1.0, 1.5, -1, 0, 2.5, math.nan, math.inf, True, None, (2.0, 1.0))


def _bad_values(name, own):
    "The values of BAD_VALUES that the description of parameter `name` does not accept (by the registry's own check)."
    from dppca_nb.algorithms.registry import check_parameter
    out = []
    for v in BAD_VALUES:
        try: check_parameter(v, name, own)
        except (ValueError, TypeError): out.append(v)
    return out


def _estimator_bad_values(name, alg):
    "The same for an estimator's parameter, described by the estimator's own table where it has one (epsilon=inf...)."
    from dppca_nb.estimators import estimator_parameter
    return _bad_values(name, {name: estimator_parameter(name, alg)})


def _option_cases():
    return [(a, o) for a in REGISTRY.values() for o in a.options if _bad_values(o, a.parameters)]


def _context(alg, option):
    "Options under which `option` is read: a private radius's share, quantile and range need the private radius."
    if not option.startswith("radius_"): return {}
    from _helpers import variants
    return next((v for v in variants(alg) if "private" in v.values()), {})


# Values accepted on purpose: max_trials takes an integral float (10 ** 6 may be written 1e6), so 1.0 means 1.
UNCHECKED = {("pure_dp_subspace", "max_trials", 1.0), ("PureDPSubspace", "max_trials", 1.0)}


def _unchecked(key, option, value):
    return (key, option) in UNCHECKED or (key, option, value) in UNCHECKED


OPTION_CASES = _option_cases()


@pytest.mark.parametrize("case", OPTION_CASES, ids=[f"{a.key}-{o}" for a, o in OPTION_CASES])
def test_registered_option_bad_value(case):
    "Every value an option's description does not accept is refused, naming the option, when planning or releasing."
    alg, option = case
    d = 0.0 if alg.measure == "pure" else 1e-5
    missed = []
    for value in _bad_values(option, alg.parameters):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                alg.run(GOOD, 1, 1.0, d, random_state=0, **{**alg.quick, **_context(alg, option), option: value})
            if not _unchecked(alg.key, option, value): missed.append(f"{value!r} accepted")
        except (ValueError, TypeError) as e:
            if not re.search(rf"\b{option}\b", str(e)): missed.append(f"{value!r}: {e}")
    assert not missed, f"{alg.key}({option}=...): " + "; ".join(missed)


def _estimator_cases():
    from dppca_nb.estimators import estimator_parameter
    out = []
    for a in REGISTRY.values():
        if not a.estimator or a.estimator not in ESTIMATORS: continue
        for name in ESTIMATORS[a.estimator]().get_params():
            if name in ("random_state", "mean"): continue      # a seed takes anything numpy takes; mean: public mean
            try: estimator_parameter(name, a)
            except KeyError: continue
            if _estimator_bad_values(name, a): out.append((a.estimator, a, name))
    return out


EST_OPTION_CASES = _estimator_cases()


@pytest.mark.parametrize("case", EST_OPTION_CASES, ids=[f"{e}-{o}" for e, _, o in EST_OPTION_CASES])
def test_estimator_option_bad_value(case):
    "An estimator refuses, naming it, every value its parameter's description does not accept."
    name, alg, option = case
    params = ESTIMATORS[name]().get_params()
    missed = []
    for value in _estimator_bad_values(option, alg):
        kw = {option: value}
        if option.startswith("radius_"): kw.update({"radius": "private"} if "radius" in params else _context(alg, option))
        if option in ("mean_share", "mean_radius"): kw["centering"] = "private"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _est(name, **{**{k: v for k, v in alg.quick.items() if k in params}, **kw}).fit(GOOD)
            if not _unchecked(name, option, value): missed.append(f"{value!r} accepted")
        except (ValueError, TypeError) as e:
            if not re.search(rf"\b{option}\b", str(e)): missed.append(f"{value!r}: {e}")
    assert not missed, f"{name}({option}=...): " + "; ".join(missed)


def test_k_equal_to_p_names_the_eigengap_rule():
    "A method that needs an eigengap below k refuses k = p with its reason, not 'between 1 and p = p - 1'."
    from dppca_nb.estimators import SmoothSensitivityPCA
    with pytest.raises(ValueError, match=r"n_components: SmoothSensitivityPCA needs an eigengap below k, so k <= p - 1 = 1, got 2"):
        SmoothSensitivityPCA(2).fit(np.random.default_rng(0).normal(size=(50, 2)) * 0.1)


def test_noisy_power_bad_statistic_and_center():
    "The noisy power plan refuses a malformed `statistic` or `center`, naming it and what it expected."
    from dppca_nb.algorithms.noisy_power import plan_noisy_power
    pl, X = plan_noisy_power(100, 4, 2, 1.0, 1e-5), np.random.default_rng(0).normal(size=(100, 4)) * 0.1
    cases = [({"statistic": {"M": np.eye(3), "n_clipped": 0}}, r"statistic\['M'\]: expected a 4 x 4 matrix"),
             ({"statistic": {"M": np.ones((4, 3)), "n_clipped": 0}}, r"statistic\['M'\]"),
             ({"statistic": {"M": np.full((4, 4), np.nan), "n_clipped": 0}}, r"statistic\['M'\]"),
             ({"statistic": {"M": np.eye(4)}}, "statistic: expected a dict"),
             ({"statistic": np.eye(4)}, "statistic: expected a dict"),
             ({"statistic": {"M": np.eye(4), "n_clipped": -1}}, r"statistic\['n_clipped'\]"),
             ({"center": np.zeros(3)}, "center: expected 4 finite numbers"),
             ({"center": np.full(4, np.inf)}, "center: expected 4 finite numbers")]
    for kw, msg in cases:
        with pytest.raises(ValueError, match=msg):
            pl.release(X, random_state=0, **kw)
    with pytest.raises(ValueError, match="X: the plan was made for 4 columns"):
        pl.release(X[:, :3], random_state=0)
    bad = X.copy(); bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="X: expected finite values"):
        pl.release(bad, random_state=0)


def test_noisy_power_default_fit_uses_the_callers_statistic(monkeypatch):
    "NoisyPowerPCA's default fit (private radius and centering) hands the plan its second moment: no pass of its own."
    import dppca_nb.algorithms.noisy_power as NP
    from dppca_nb.estimators import NoisyPowerPCA
    X = np.random.default_rng(1).normal(size=(3000, 6)) * [3, 2, 1, 1, 1, 1]
    ref = NoisyPowerPCA(n_components=2, epsilon=1.0, delta=1e-5, random_state=0).fit(X).components_
    def no_pass(*a, **k): raise AssertionError("the plan read X itself")
    monkeypatch.setattr(NP, "second_moment_sums", no_pass)
    monkeypatch.setattr(NP, "_blocked_products", no_pass)
    X0 = X.copy()
    est = NoisyPowerPCA(n_components=2, epsilon=1.0, delta=1e-5, random_state=0).fit(X)
    np.testing.assert_array_equal(est.components_, ref)
    np.testing.assert_array_equal(X, X0)


def test_order_step_names_the_row_of_X():
    "The ordering step's pass is blocked; a non-finite entry is named by its row in X, not in its block."
    from dppca_nb.backends.blocks import default_block_rows
    from dppca_nb.privacy.centering import plan_order
    p = 1000
    n = 2 * default_block_rows(p) + 300                     # three blocks: the NaN in the third
    X = np.random.default_rng(0).normal(size=(n, p)) * 0.01
    row = n - 7
    X[row, 5] = np.nan
    with pytest.raises(ValueError, match=f"found NaN at row {row}, column 5"):
        plan_order(n, p, 2, 0.5, 1e-6).release(X, 0, basis=np.eye(p)[:, :2])


def test_projected_sums_names_a_bad_entry():
    from dppca_nb.backends.moments import projected_sums
    X = np.random.default_rng(0).normal(size=(500, 6)); X[3, 2] = np.nan
    with pytest.raises(ValueError, match="found NaN at row 3"):
        projected_sums(X, np.eye(6)[:, :2], 1.0)


def test_adaptive_shares_are_checked_by_name():
    "order_share and mean_share: shares in [0, 1), together below 1, each error naming its argument."
    from dppca_nb.algorithms.adaptive import plan_adaptive_dp_kpca
    from dppca_nb.algorithms.adaptive_budget import adaptive_budget
    kw = dict(subspace="block", n_passes=2, warm_share=0.1, final_share=0.75, spread_share=0.1, spread_quantile=0.5)
    with pytest.raises(ValueError, match="order_share"):
        plan_adaptive_dp_kpca(100, 4, 2, 1.0, 1e-5, order_share=1.0)
    with pytest.raises(ValueError, match="order_share"):
        adaptive_budget(5000, 3, 1.0, 1e-5, order_share=1.0, **kw)
    with pytest.raises(ValueError, match="mean_share"):
        adaptive_budget(5000, 3, 1.0, 1e-5, order_share=0.5, mean_share=0.5, **kw)
