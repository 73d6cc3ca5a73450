"""Bad input to the privacy audits (`dppca_nb.privacy.audit`): each function names the argument and what it expected.

The audits themselves (planted bugs flagged, shipped releases passing) are tested in their notebook,
nbs/03_privacy/05_audit.ipynb; the floating-point support audit also in tests/test_fp_audit.py.
"""
import numpy as np
import pytest

from dppca_nb.privacy.audit import (add_remove_neighbours, audit_mechanism, audit_plan, audit_published, audit_samples,
                                    diagonal_difference, eigenvalue_neighbours, gaussian_output_audit, gaussian_profile_audit,
                                    laplace_log_ratio, moment_coordinates, moment_noise, published_values,
                                    second_moment_neighbours, support_audit, support_samples)
from dppca_nb.privacy.releases import plan_second_moment

Z = np.zeros(100)


def _mech(X, rng):
    return X.T @ X / len(X) + rng.normal(size=(2, 2))


def _stat(S):
    return float(S[0, 0] - S[1, 1])


@pytest.mark.parametrize("call, match", [
    (lambda: audit_samples(np.ones(10), np.ones(10), epsilon=1.0), "at least 20 runs"),
    (lambda: audit_samples(np.ones(30), np.ones(20), epsilon=1.0), "same number"),
    (lambda: audit_samples(np.r_[np.nan, np.ones(29)], np.ones(30), epsilon=1.0), "finite"),
    (lambda: audit_samples(Z, Z, epsilon=0.0), "epsilon"),
    (lambda: audit_samples(Z, Z, epsilon=1.0, delta=1.5), "delta"),
    (lambda: audit_samples(Z, Z, epsilon=1.0, alpha=1.5), "alpha"),
    (lambda: audit_samples(Z, Z, epsilon=1.0, selection_fraction=1.0), "selection_fraction"),
], ids=["few runs", "lengths", "nan", "epsilon", "delta", "alpha", "selection_fraction"])
def test_audit_samples_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_audit_mechanism_bad_input():
    D, Dp = second_moment_neighbours(3)
    with pytest.raises(ValueError, match="n_trials"):
        audit_mechanism(_mech, D, Dp, statistic=_stat, n_trials=5, epsilon=1.0)
    with pytest.raises((TypeError, ValueError), match="n_trials: expected"):
        audit_mechanism(_mech, D, Dp, statistic=_stat, n_trials=100.5, epsilon=1.0)
    with pytest.raises(TypeError, match="mechanism: expected a callable"):
        audit_mechanism("gsm", D, Dp, statistic=_stat, epsilon=1.0)
    with pytest.raises(TypeError, match="statistic: expected a callable"):
        audit_mechanism(_mech, D, Dp, statistic="trace", epsilon=1.0)


@pytest.mark.parametrize("call, match", [
    (lambda: second_moment_neighbours(1), "n: expected"),
    (lambda: second_moment_neighbours(3, p=2.5), "p: expected an integer >= 2"),
    (lambda: second_moment_neighbours(np.bool_(True)), "n: expected an integer >= 2"),   # not a bool either
    (lambda: second_moment_neighbours(3, base="v"), "base"),
    (lambda: eigenvalue_neighbours(1), "p: expected"),
    (lambda: eigenvalue_neighbours(2, -1.0), "radius"),
    (lambda: add_remove_neighbours(0), "n: expected"),
    (lambda: add_remove_neighbours(5, 1), "p: expected"),
], ids=["n", "p", "bool n", "base", "eig p", "eig radius", "add/remove n", "add/remove p"])
def test_neighbours_bad_input(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()


@pytest.mark.parametrize("call, error, match", [
    (lambda: gaussian_output_audit([0, 1], [0, 1, 2], 1.0, epsilon=1.0), ValueError, "mean_neighbour"),
    (lambda: gaussian_output_audit([0, 1], [0, 0], -1.0, epsilon=1.0), ValueError, "sigma"),
    (lambda: gaussian_output_audit([0, 1], [0, 0], 1.0, sigma_neighbour=0.0, epsilon=1.0), ValueError, "sigma_neighbour"),
    (lambda: gaussian_output_audit([0, 1], [0, 0], 1.0, epsilon=1.0, noise="normal"), TypeError, "noise"),
    (lambda: gaussian_output_audit([0, 1], [0, 0], 1.0, epsilon=1.0, noise=lambda s, r, m: r.normal(size=(m, 3))),
     ValueError, "draws of 2 values"),
    (lambda: gaussian_output_audit([0, np.nan], [0, 0], 1.0, epsilon=1.0), ValueError, "finite"),
    (lambda: moment_coordinates(np.eye(2), "lower"), ValueError, "noise_shape"),
    (lambda: moment_coordinates(np.ones((2, 3))), ValueError, "S: expected a square"),
    (lambda: moment_noise(2, "diag"), ValueError, "noise_shape"),
    (lambda: moment_noise(0), ValueError, "p"),
    (lambda: laplace_log_ratio([1, 2], [1, 2, 3]), ValueError, "mean_neighbour"),
    (lambda: laplace_log_ratio([1, 2], [2, 1])(np.zeros(3)), ValueError, "release of 2 values"),
    (lambda: gaussian_profile_audit([1.0], [0.0, 1.0], 1.0, epsilon=1.0, delta=1e-5), ValueError, "statistic_neighbour"),
    (lambda: gaussian_profile_audit([1.0], [0.0], 0.0, epsilon=1.0, delta=1e-5), ValueError, "sigma"),
    (lambda: gaussian_profile_audit([1.0], [0.0], 1.0, epsilon=1.0, delta=1.5), ValueError, "delta"),
    (lambda: gaussian_profile_audit([np.inf], [0.0], 1.0, epsilon=1.0, delta=1e-5), ValueError, "finite"),
], ids=lambda x: x if isinstance(x, str) else None)
def test_gaussian_audits_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_audit_published_bad_input():
    X = np.eye(3)
    with pytest.raises(TypeError, match="fn: expected a callable"):
        audit_published("f", X, X)
    with pytest.raises(TypeError, match="a Release or a dict"):
        audit_published(lambda X, random_state: X, X, X)                  # neither a Release nor a dict
    with pytest.raises(ValueError, match="random_state"):
        audit_published(lambda X, random_state: {}, X, X, random_state=-1)
    with pytest.raises(TypeError, match="a Release or a dict"):
        published_values((X, {"sigma": 1.0}))                             # a (value, info) pair is not a release


def test_support_audit_bad_input():
    with pytest.raises(ValueError, match="keys: expected outputs on both"):
        support_samples([], [b"x"], epsilon=1.0)
    with pytest.raises(TypeError, match="mechanism: expected a callable"):
        support_audit(None, 0, 0, epsilon=1.0)
    with pytest.raises(ValueError, match="n_trials"):
        support_audit(lambda X, rng: 0.0, 0, 0, epsilon=1.0, n_trials=5)


def test_audit_plan_bad_input():
    D, Dp = second_moment_neighbours(3)
    with pytest.raises(TypeError, match="plan: expected a privacy.contract.Plan"):
        audit_plan(_mech, D, Dp, statistic=_stat)
    with pytest.raises(ValueError, match="n_trials"):
        audit_plan(plan_second_moment(3, 2, 1.0, 1e-5), D, Dp, statistic=diagonal_difference, n_trials=5)
    with pytest.raises(ValueError, match="epsilon"):
        audit_plan(plan_second_moment(3, 2, 1.0, 1e-5), D, Dp, statistic=diagonal_difference, epsilon=-1.0, n_trials=20)
