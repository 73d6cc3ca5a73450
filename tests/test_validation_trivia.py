"""Bad-input checks moved out of the notebooks' reading flow: each is the notebook's own check (the same call, the
same words in the message), and the notebook named above it is where the function is explained. A failing call must
raise (any exception, as fastcore's `test_fail`) with `contains` in its message."""
import socket
import sys
import tempfile
import unittest.mock
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def fails(f, contains):
    "fastcore's test_fail: `f()` raises, and `contains` is in the message."
    with pytest.raises(Exception) as e:
        f()
    assert contains in str(e.value), f"{contains!r} not in {str(e.value)!r}"


# 00_core/00_validation
def test_check_data_names_the_nan():
    from dppca_nb.core.validation import check_data
    fails(lambda: check_data(np.array([[1., np.nan], [0, 1]])), "NaN at row 0, column 1")


# 00_core/01_linalg
def test_top_k_eigvecs_refuses_k_0():
    from dppca_nb.core.linalg import top_k_eigvecs
    M = np.random.default_rng(0).normal(size=(30, 30)); M = M + M.T
    fails(lambda: top_k_eigvecs(M, 0), "k: expected an integer between 1 and p = 30")


# 02_data/00_datasets: the download paths without a network
def test_loaders_offline_say_what_to_do():
    import sklearn.datasets
    from dppca_nb.data.datasets import load_buzz, load_covtype
    def _offline(*a, **k): raise OSError("network unreachable")
    with unittest.mock.patch.object(sklearn.datasets, "fetch_covtype", _offline):
        fails(lambda: load_covtype(data_home=tempfile.mkdtemp()), "source='sample'")
    tmp = Path(tempfile.mkdtemp())
    fails(lambda: load_buzz(data_home=tmp, url=(tmp / "missing.zip").as_uri()), "Download the UCI archive")


def test_signed_spike_refuses_a_negative_spike():
    from dppca_nb.data.datasets import signed_spike
    fails(lambda: signed_spike(5, 3, spike=-1.0), "spike")


# 03_privacy/00_mechanisms
def test_classic_calibration_refusal_suggests_analytic():
    from dppca_nb.privacy.mechanisms import gaussian_sigma
    fails(lambda: gaussian_sigma(10.0, 1e-5, 2.0, "classic"), "calibration='analytic'")


def test_check_square_names_the_argument():
    from dppca_nb.privacy.mechanisms import check_square
    fails(lambda: check_square(np.ones((3, 2)), "M_sum"), "M_sum: expected a square")


# 03_privacy/02_discrete
def test_calibration_checks():
    from dppca_nb.privacy.discrete import check_discrete_calibration, check_noise_calibration
    fails(lambda: check_discrete_calibration("zcdp"), "'analytic' here")        # a caller that does not pass it on
    fails(lambda: check_noise_calibration("zcdp"), "'zcdp' calibrates the discrete Gaussian")


# 04_algorithms/00_baselines: NSGGD's arguments (on the notebook's 3000 x 10 rows with 5% outliers)
@pytest.fixture(scope="module")
def Xc10():
    from dppca_nb.data.datasets import contaminate, sample_gaussian
    rng = np.random.default_rng(11)
    Sig10 = np.diag([10.0, 10.0] + [1.0] * 8)
    return contaminate(sample_gaussian(Sig10, 3000, rng), 0.05, avoid=np.eye(10)[:, :2], random_state=rng)[0]


@pytest.mark.parametrize("kw, contains", [
    (dict(accounting="rdp"), "accounting"),
    (dict(neighbouring="add_remove"), "depend on n"),
    (dict(batch_size=0), "batch_size"),
    (dict(n_iter=0), "n_iter"),
    (dict(n_iter=True), "n_iter: expected a positive integer"),
    (dict(batch_size=10.5), "batch_size: expected"),
    (dict(batch_size=10**9), "batch_size: expected an integer between 1 and n"),
    (dict(neighbouring="swap"), "neighbouring"),
])
def test_nsggd_bad_arguments(Xc10, kw, contains):
    from dppca_nb.algorithms.baselines import nsggd
    fails(lambda: nsggd(Xc10, 2, 1.0, 1e-5, **kw), contains)


# 04_algorithms/06_pure (X: the notebook's reference design, n = 1e5, p = 40)
def test_pure_budget_and_subspace_refusals():
    from dppca_nb.algorithms.pure import plan_pure_dp_subspace, pure_dp_budget, pure_dp_subspace
    from dppca_nb.data.datasets import reference_design, sample_gaussian
    fails(lambda: pure_dp_budget(1.0, 3, 1 - 1e-16), "leaves no budget")
    X = sample_gaussian(reference_design(40, 5, random_state=0)[0], 100_000, random_state=1)
    fails(lambda: pure_dp_subspace(X, 6, 1.0, max_trials=1000), "Nothing was read")       # refused at planning
    fails(lambda: pure_dp_subspace(X, 5, 1.0), "k <= 3 here")
    fails(lambda: plan_pure_dp_subspace(100_000, 40, 4, 1.0), "k <= 3 here")


# 04_algorithms/09_registry
def test_registry_lookups():
    from dppca_nb.algorithms.registry import Parameter, check_parameter, get_algorithm, parameter
    fails(lambda: parameter("lam"), "described nowhere")
    fails(lambda: Parameter("x", "float", "doc", ("real>1",)), "accepts")
    fails(lambda: check_parameter("full", "noise_shape"), "noise_shape: expected {'vecd', 'upper'}")
    fails(lambda: check_parameter(True, "epsilon"), "epsilon")
    fails(lambda: get_algorithm("nope"), "no registered algorithm 'nope'")


# 07_experiments/05_robust_study
def test_robust_study_arguments():
    from dppca_nb.algorithms.robust import kendall_sensitivity
    from dppca_nb.experiments.robust import robust_methods, robust_sample
    from dppca_nb.privacy.mechanisms import gaussian_sigma
    # the notebook's paper_noise_ratio(10.0): the paper's classic calibration is refused at epsilon = 10
    fails(lambda: gaussian_sigma(10.0, 1e-5, kendall_sensitivity("paper", n=2000), "classic"), "calibration")
    fails(lambda: robust_methods(2, 1.0, 1e-5, 10, centering="oracle"), "centering")
    fails(lambda: robust_sample("cauchy", 10), "scenario")


# 08_teach/04_widgets
def test_serve_app_refuses_a_busy_port():
    pytest.importorskip("voila")
    from dppca_nb.teach.widgets import serve_app
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        fails(lambda: serve_app(busy.getsockname()[1], False), "is in use")


# 10_benchmarks/00_benchmarks (benchmarks/suite.py)
def test_benchmark_arguments(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    sys.modules.pop("suite", None)
    import suite
    fails(lambda: suite.bench_explorers(0), "repeat: expected a positive integer")
    fails(lambda: suite.bench_explorers(1.5), "repeat: expected a positive integer")
    fails(lambda: suite.run_all("huge"), "size")
    fails(lambda: suite.run_all("small", sections=("kendal",)), "sections")
