"""Bad-input checks of the estimators' notebooks (nbs/06_estimators/00_estimators.ipynb, 01_preprocessing.ipynb,
02_model_selection.ipynb, where each class is explained), moved out of their reading flow: the notebooks' own calls and
message fragments, on the notebooks' data."""
import numpy as np
import pytest
from fastcore import test as fct          # fct.test_fail: pytest would collect a bare test_fail
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from dppca_nb.data.datasets import sample_gaussian, spiked_covariance
from dppca_nb.estimators import AnalyzeGaussPCA
from dppca_nb.model_selection import score_contract, search_privacy
from dppca_nb.preprocessing import PrivateStandardScaler, check_pipeline, uncertified_steps


# 06_estimators/00_estimators
def test_analyze_gauss_pca_refuses_a_negative_epsilon():   # the notebook shows the noise_shape refusal
    Sigma, Vtrue = spiked_covariance(10, 2, 4.0, random_state=0)
    Xs = (sample_gaussian(Sigma, 10000, random_state=1) + 0.1)[:3000]
    fct.test_fail(lambda: AnalyzeGaussPCA(2, epsilon=-1).fit(Xs), contains="epsilon")


# 06_estimators/01_preprocessing
@pytest.fixture(scope="module")
def survey():
    rng = np.random.default_rng(0)
    n = 5000
    return np.column_stack([rng.uniform(20, 80, n), rng.normal(170, 8, n), rng.exponential(2.0, n)])   # age, height, hours


def test_private_standard_scaler_refusals(survey):
    Xs = survey
    for b in [(1, 0), (0, np.inf), ([0, 0], [1, 1]), "wide"]:
        fct.test_fail(lambda: PrivateStandardScaler(bounds=b).fit(Xs), contains="bounds")  # noqa: B023 (called at once)
    fct.test_fail(lambda: PrivateStandardScaler(epsilon=0).fit(Xs), contains="epsilon")


def test_pipeline_checks_refuse_a_lone_step():
    to_ball = lambda X: X / np.linalg.norm(X, axis=1).max()          # a function of the whole batch
    fct.test_fail(lambda: check_pipeline(StandardScaler()), contains="pipe: expected a sklearn.pipeline.Pipeline")
    fct.test_fail(lambda: uncertified_steps(FunctionTransformer(to_ball)), contains="pipe: expected")


# 06_estimators/02_model_selection
def test_score_contract_refusals():
    fct.test_fail(lambda: score_contract(100, 6, 0.0, 1.0), contains="epsilon"); fct.test_fail(lambda: score_contract(100, 6, 0.1, -1), contains="radius")


def test_search_privacy_refuses_a_non_accountant():
    fct.test_fail(lambda: search_privacy(object()), contains="accountant")
