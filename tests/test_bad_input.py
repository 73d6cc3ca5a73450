"""Bad input, everywhere: every public algorithm function and estimator rejects malformed data and parameters
with a ValueError or TypeError that names the argument, and never modifies the caller's arrays.

Functions whose module has not landed are skipped (import-guarded); `test_inventory` lists them.
Hypothesis property tests draw shapes and values; the whole file runs in well under a minute.
"""
import importlib
import math
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
    from dppca_nb.algorithms.registry import REGISTRY
except ImportError:
    REGISTRY = {}


def _kind(alg):
    if alg.output == "covariance":
        return "XED"
    return "XkE" if alg.measure == "pure" else "XkED"


FUNCTIONS = [(a.function.rpartition(".")[0], a.key, _kind(a), dict(a.quick)) for a in REGISTRY.values()] + [
    ("dppca_nb.privacy.releases", "gaussian_second_moment", "XED", {}),
    ("dppca_nb.algorithms.local", "local_second_moment", "XED", {}),
    ("dppca_nb.algorithms.robust", "noisy_kendall", "XED", {}),
    ("dppca_nb.algorithms.robust", "private_radius", "XE", {}),
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
    assert {"analyze_gauss", "local_gaussian_pca", "pure_dp_pca", "dp_threshold_covariance"} <= set(REGISTRY)
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
            name = "radius" if entry[1] == "kendall_tau" else "winsorization_radius"
            with pytest.raises((ValueError, TypeError), match=name):
                _call(entry, GOOD, transform="winsorized", **{name: -1.0})


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
    cases = [("epsilon", v) for v in (0, -1.0, math.inf, math.nan, "1")]
    if "delta" in params:
        cases += [("delta", v) for v in (1.0, -0.5, 2.0, "x")]
        if name != "SmoothSensitivityPCA":
            cases.append(("delta", 0.0))
    if "n_components" in params:
        cases += [("n_components", v) for v in (0, 5, -2, 1.5)]
    if "radius" in params and name != "RobustKendallPCA":
        cases += [("radius", v) for v in (-1.0, 0.0)]
    if "radius" in params and name != "RobustKendallPCA":
        cases += [("radius", v) for v in ("median", None, math.inf)]
    if "mean_radius" in params:
        cases += [("mean_radius", v) for v in (-1.0, "mean")]
    if "radius_factor" in params:              # a private radius: its share, quantile, factor and public range
        cases += [("radius_share", v) for v in (0.0, 1.0)] + [("radius_quantile", v) for v in (0.0, 1.5)]
        cases += [("radius_factor", -2.0)] + [("radius_bounds", v) for v in ((2.0, 1.0), "wide", (0.0, 1.0))]
    if "accountant" in params:
        cases += [("accountant", "budget")]
    cases += [("centering", "median")]
    if "mean_share" in params:
        cases += [("mean_share", v) for v in (0.0, 1.0, -0.1)]
    for arg, value in cases:
        kw = {arg: value}
        if arg in ("mean_share", "mean_radius"):
            kw["centering"] = "private"
        if arg.startswith("radius_") and name != "RobustKendallPCA":
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
