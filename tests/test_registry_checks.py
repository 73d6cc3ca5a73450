"""Bad-input checks of nbs/04_algorithms/09_registry.ipynb (where each function is explained), moved out of its reading
flow: the notebook's own calls and message fragments, with the notebook's toy method rebuilt here."""
import numpy as np
from fastcore import test as fct          # fct.test_fail: pytest would collect a bare test_fail

from dppca_nb.algorithms.registry import Algorithm, ErrorModel, PublicFunction, algorithms, check_parameter, register
from dppca_nb.core.linalg import top_k_eigvecs
from dppca_nb.privacy.contract import Plan
from dppca_nb.privacy.releases import plan_second_moment


def plan_toy_pca(n: int, p: int, k: int | None, epsilon: float, delta: float, *, radius: float = 1.0,
                 noise_shape: str = "vecd") -> Plan:
    "The noisy second moment of rows clipped to `radius`, then its top-k eigenvectors."
    return plan_second_moment(n, p, epsilon, delta, radius=radius, noise_shape=noise_shape, k=k).then(
        lambda S, rng: (top_k_eigvecs(S, k), {}))


def test_check_parameter_refuses_out_of_range():
    fct.test_fail(lambda: check_parameter(1.5, "mean_share"), contains="mean_share: expected float in (0, 1), got 1.5")


def test_a_generated_function_refuses_an_unknown_keyword():
    toy = Algorithm("toy_pca", plan_toy_pca, PublicFunction("A toy (epsilon, delta)-DP top-k subspace (p x k).",
                    "Orthonormal basis of the released subspace."), "central", "approximate", "subspace", "a toy")
    Xt = np.random.default_rng(1).normal(size=(50, 4)) * 0.3
    fct.test_fail(lambda: toy.function(Xt, 2, 1.0, 1e-5, bogus=1), contains="toy_pca(): got an unexpected keyword argument")


def test_error_model_and_algorithm_refusals():
    fct.test_fail(lambda: ErrorModel("table", "a note"), contains="kind")
    fct.test_fail(lambda: Algorithm("toy_pca", plan_toy_pca, print, "central", "approximate", "subspace", "a toy",
                                    noise_limit="n"), contains="noise_limit")


def test_register_refuses_a_taken_key():
    algorithms()                                  # the whole table, as in the notebook (else the key is free)
    fct.test_fail(lambda: register(Algorithm("analyze_gauss", lambda *a: None, print, "central", "approximate", "subspace", "x")),
                  contains="registered already")


def test_algorithms_scans_the_package_once(monkeypatch):
    "A fit asks for the table a dozen times: after the first scan, no module search is made again."
    import pkgutil
    from dppca_nb.algorithms import registry
    first = registry.algorithms()
    def no_scan(*a, **k): raise AssertionError("the package was scanned again")
    monkeypatch.setattr(pkgutil, "iter_modules", no_scan)
    assert registry.algorithms() is first and "analyze_gauss" in first
