"""Bad input to the theory layer (rates, explicit bounds) and the bound table's contract with the algorithm registry.

The chapters `nbs/05_theory/00_bounds` (the rates), `02_bounds/` (one notebook a mechanism) and `02_error_bounds` test
what the bounds say; this file tests that a wrong
argument is refused with a message naming it, and that every registered bound belongs to a registered algorithm.
"""
import dataclasses
import warnings

import numpy as np
import pytest

from dppca_nb.theory import rates as rb
from dppca_nb.theory import bounds as tb
from dppca_nb.theory import error_bounds as eb
from dppca_nb.data.datasets import spiked_covariance

EV = np.linalg.eigvalsh(spiked_covariance(40, 10, 1.0, random_state=0)[0])
EV4 = np.linalg.eigvalsh(spiked_covariance(400, 10, 1.0, s=40, random_state=0)[0])
LAM4 = [4.0, 3.0, 2.0, 1.0]
LAM12 = np.array([2.0] + [1.0] * 11) / 120


# ---- the bound table ----------------------------------------------------------------------------------------------

def test_every_bound_is_a_registered_algorithm():
    from dppca_nb.algorithms.registry import algorithms
    reg = algorithms()
    assert set(eb.BOUNDS) <= set(reg), sorted(set(eb.BOUNDS) - set(reg))
    for name, (key, fixed) in eb.BOUND_NAMES.items():
        assert key in eb.BOUNDS and isinstance(fixed, dict), name


def test_every_registered_algorithm_with_a_subspace_or_covariance_bound_is_listed():
    # the mechanisms with an explicit bracket (or, for the adaptive one, half a bracket and its rate): seven families
    # register one in their theory sections; every key is a registered algorithm (above)
    from dppca_nb.algorithms.registry import get_algorithm
    assert len(eb.BOUNDS) >= 7 and all(get_algorithm(key).key == key for key in eb.BOUNDS)
    assert eb.resolve_bound("adaptive_dp_pca")[0] in eb.BOUNDS                   # the newest mechanism has its entry


def test_registry_names_resolve_to_the_key():
    assert eb.resolve_bound("adaptive_dp_pca")[0] == "adaptive_dp_kpca"        # a registry alias
    assert eb.resolve_bound("local-gaussian-pca")[0] == "local_gaussian_pca"   # the dashed spelling
    assert eb.resolve_bound("smooth_cauchy") == ("smooth_sensitivity_pca", {"noise": "cauchy"})


def test_register_bound_adds_and_names(monkeypatch):
    # the table lives in dppca_nb.theory.bounds (error_bounds re-exports it): a copy there, restored after the test
    monkeypatch.setattr(tb, "BOUNDS", dict(tb.load_all_bounds()))
    monkeypatch.setattr(tb, "BOUND_NAMES", dict(tb.BOUND_NAMES))
    calls = []

    def fake(n, p, k=None, epsilon=1.0, delta=1e-5, *, width=1.0):
        calls.append(width)
        return eb.ErrorBounds("sgpca", 0.0, width, "none", 1.0, False)

    eb.register_bound("sgpca", fake, names={"sgpca_wide": {"width": 2.0}})
    assert eb.error_bounds("sgpca", 100, 4, 1).upper == 1.0
    b = eb.error_bounds("sgpca_wide", 100, 4, 1)
    assert (b.upper, b.method) == (2.0, "sgpca_wide") and calls == [1.0, 2.0]
    with pytest.raises(TypeError, match="options"):
        eb.error_bounds("sgpca", 100, 4, 1, height=3)
    with pytest.raises(TypeError, match="fn"):
        eb.register_bound("sgpca", None)
    with pytest.raises(TypeError, match="key"):
        eb.register_bound("", fake)


# ---- error_bounds: bad input ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, words", [
    (lambda: eb.error_bounds("pca", 100, 4, 1, eigenvalues=LAM4), "method"),
    (lambda: eb.error_bounds("nope", 100, 4, 1, eigenvalues=LAM4), "method"),
    (lambda: eb.error_bounds("pure_dp_pca", 100, 4, 1, eigenvalues=LAM4), "method"),     # registered, but no bound
    (lambda: eb.error_bounds("analyze_gauss", 100, 4, 1), "eigenvalues"),
    (lambda: eb.error_bounds("analyze_gauss", 100, 4, 2, eigenvalues=[4, 3, 3, 1]), "eigengap"),
    (lambda: eb.error_bounds("analyze_gauss", 100, 4, 1, eigenvalues=[4, 3, 1]), "eigenvalues: expected 4"),
    (lambda: eb.error_bounds("analyze_gauss", 100, 4, None, eigenvalues=LAM4), "k"),
    (lambda: eb.error_bounds("analyze_gauss", 100, 4, 1, eigenvalues=LAM4, noise_shape="lower"), "noise_shape"),
    (lambda: eb.error_bounds("analyze_gauss", 100, 4, 1, eigenvalues=LAM4, data="elliptical"), "g_dppca"),
    (lambda: eb.error_bounds("analyze_gauss", 100, 4, 1, eigenvalues=LAM4, data="rows"), "data"),
    (lambda: eb.error_bounds("analyze_gauss", 100, 4, 1, 0.0, eigenvalues=LAM4), "epsilon"),
    (lambda: eb.error_bounds("analyze_gauss", 1, 4, 1, eigenvalues=LAM4), "n"),
    (lambda: eb.error_bounds("g_dppca", 100, 4, 1, eigenvalues=LAM4, noise_shape="upper"), "noise_shape"),
    (lambda: eb.error_bounds("dp_threshold", 100, 4, epsilon=1.0, delta=1e-5), "Sigma"),
    (lambda: eb.error_bounds("dp_threshold", 100, 4, Sigma=np.eye(3)), "Sigma: expected a 4 x 4"),
    (lambda: eb.error_bounds("smooth_gaussian", 100, 4, 1, 1.0, 0.0, eigenvalues=LAM4), "delta"),
    (lambda: eb.error_bounds("smooth_sensitivity_pca", 100, 4, 1, eigenvalues=LAM4, noise="laplace"), "noise"),
    (lambda: eb.error_bounds("smooth_gaussian", 10**5, 4, 1, eigenvalues=LAM4, constants="nrs"), "constants"),
    (lambda: eb.error_bounds("local_sparse", 1e11, 12, 1, eigenvalues=LAM12, s=3, penalty="huge"), "penalty"),
    (lambda: eb.error_bounds("local_sparse", 1e11, 12, 1, eigenvalues=LAM12, s=3, penalty=-1.0), "penalty"),
    (lambda: eb.error_bounds("local_sparse", 1e11, 12, 1, eigenvalues=LAM12, s=3, eta=-1.0), "eta"),
    (lambda: eb.error_bounds("adaptive_dp_pca", 100, 4, 1), "eigenvalues"),
    (lambda: eb.error_bounds("adaptive_dp_pca", 100, 4, None, eigenvalues=LAM4), "k"),
])
def test_error_bounds_bad_input(call, words):
    with pytest.raises((ValueError, TypeError), match=words):
        call()


def test_an_option_of_another_algorithm_is_named():
    with pytest.raises(TypeError, match="options: the bound of analyze_gauss takes .*; got constants"):
        eb.error_bounds("analyze_gauss", 100, 4, 1, eigenvalues=LAM4, constants="paper")


def test_local_sparse_without_s_has_no_lower_bound():
    assert eb.error_bounds("local_sparse", 10**6, 4, 1, eigenvalues=LAM4).lower == 0.0


def test_error_bounds_is_frozen_and_keeps_the_callers_arrays():
    lam = np.array(LAM4) / 100
    before = lam.copy()
    b = eb.error_bounds("analyze_gauss", 10**5, 4, 1, eigenvalues=lam)
    np.testing.assert_array_equal(lam, before)
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.lower = 0.2


# ---- the building blocks --------------------------------------------------------------------------------------------

def test_building_blocks_bad_input():
    with pytest.raises(ValueError, match="noise_shape"):
        eb.noise_moments(5, 2, 1.0, "lower")
    with pytest.raises(ValueError, match="scale"):
        eb.noise_moments(5, 2, -1.0)
    with pytest.raises(ValueError, match="eigenvalues"):
        eb.gaussian_sampling_moments([1.0, np.nan], 10, 1)
    with pytest.raises(ValueError, match="design"):
        eb.kendall_sampling_moments(LAM4, 200, 1, "sparse")
    with pytest.raises(ValueError, match="result"):
        eb.fantope_duality_gap(np.eye(3), None, 0.3)
    with pytest.raises(ValueError, match="noise_shape"):
        eb.dp_threshold_bounds(np.eye(3) * 0.1, 1000, 1.0, 1e-5, noise_shape="lower")


# ---- the papers' rates (theory.rates) -------------------------------------------------------------------------------

@pytest.mark.parametrize("call, words", [
    (lambda: rb.spectrum_terms(2, eigenvalues=[1, 1, 1]), "eigengap"),
    (lambda: rb.spectrum_terms(2, eigenvalues=[1, 1], Sigma=np.eye(2)), "exactly one"),
    (lambda: rb.theorem1_lower(-5, 40, 10, 0.5, eigenvalues=EV), "n: expected positive"),
    (lambda: rb.theorem1_lower(1e9, 40, 10, 0.5, eigenvalues=EV[:5]), "eigenvalues: expected 40"),
    (lambda: rb.theorem1_lower(1e9, 40, 10, 0.5, eigenvalues=EV, check="loud"), "check"),
    (lambda: rb.theorem3_lower(1e9, 400, 10, 5, 0.5, eigenvalues=EV4), "s: expected"),
    (lambda: rb.theorem4_upper(1e9, 400, 1, True, 0.5, 1e-5, eigenvalues=EV4), "s: expected"),   # a bool is not a count
    (lambda: rb.theorem1_lower(1e9, True, 1, 0.5, eigenvalues=[2.0]), "p: expected an integer >= 2"),
    (lambda: rb.adaptive_rate(100, 3, 1, 1.0, 1e-5, eigenvalues=[1.0, 1.0, 1.0]), "eigenvalues"),
    (lambda: rb.theorem1_lower.rate_class.covers("central"), "guarantee"),
])
def test_rates_bad_input(call, words):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.BoundConditionWarning)
        with pytest.raises((ValueError, TypeError), match=words):
            call()


def test_rate_tables_are_keyed_by_registry_keys():
    from dppca_nb.algorithms.registry import algorithms
    named = {r.estimators for r in rb.RATES.values()} - {"every"}
    assert named and named <= set(algorithms()), sorted(named - set(algorithms()))


# ---- same inputs, same numbers ----------------------------------------------------------------------------------------

def test_the_reference_grid_is_unchanged():
    """Every bound on a fixed grid of settings and options (and the rates and study predictions that read a noise
    scale) equals, bit for bit (to a few ulps across CPUs), the reference written before the theory layer was split into a module per mechanism
    and its noise scales were read from the plans (tests/_bounds_grid.py)."""
    import json
    import math
    from _bounds_grid import REFERENCE, compute
    ref, now = json.loads(REFERENCE.read_text()), json.loads(json.dumps(compute()))
    assert len(now["bounds"]) == len(ref["bounds"]) >= 30

    def same(a, b):      # bit for bit, but for a few ulps where a CPU's libm or BLAS kernel rounds one step otherwise
        if isinstance(a, float) and isinstance(b, float):
            return a == b or (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=8 * 2.0 ** -52, abs_tol=0)
        if isinstance(a, dict) and isinstance(b, dict): return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, list) and isinstance(b, list): return len(a) == len(b) and all(map(same, a, b))
        return a == b
    for r, b in zip(ref["bounds"], now["bounds"]):
        assert same(r, b), (r["call"][:6], r, b)
    assert same(now["extra"], ref["extra"])
