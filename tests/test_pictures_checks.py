"""Bad-input checks of nbs/04_algorithms/11_pictures.ipynb (where each function is explained), moved out of its reading
flow: the notebook's own calls and message fragments, on the notebook's data."""
import numpy as np
import pytest
from fastcore import test as fct          # fct.test_fail: pytest would collect a bare test_fail

from dppca_nb.algorithms.pictures import plan_private_scores, plan_private_scree, projected_rows


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 6)) * np.array([3.0, 2.0, 1.0, 1.0, 0.5, 0.5]) + 1.0   # variances 9, 4, 1, 1, .25, .25
    V, c = np.eye(6)[:, :3], np.ones(6)
    return X, V, c


def test_projected_rows_refusals(data):
    X, V, c = data
    fct.test_fail(lambda: projected_rows(X, np.eye(5)), contains="basis")
    fct.test_fail(lambda: projected_rows(X, V, np.ones(5)), contains="center")


def test_private_scree_refusals(data):
    X, V, c = data
    pl = plan_private_scree(2000, 6, 3, 2.0, 1e-5)
    fct.test_fail(lambda: pl.release(X, 0, basis=np.eye(6)[:, :2], center=c), contains="k = 3")
    fct.test_fail(lambda: plan_private_scree(2000, 6, 3, 2.0, 1e-5, method="mean"), contains="method")


def test_private_scores_refusals(data):
    X, V, c = data
    pg = plan_private_scores(2000, 6, 2, 2.0, 1e-5, n_groups=2)
    fct.test_fail(lambda: pg.release(X, 0, basis=V[:, :2], center=c), contains="labels")
    fct.test_fail(lambda: pg.release(X, 0, basis=V[:, :2], center=c, labels=np.full(2000, 2)), contains="group codes")
    fct.test_fail(lambda: plan_private_scores(2000, 6, 3, 2.0, 1e-5), contains="2 components")


def test_pictures_explorer_refusals():
    "The pictures explorer's bad input (from its chapter, nbs/08_teach/05_pictures_explorer)."
    from dppca_nb.teach.pictures import exact_pictures, pictures_snapshot
    fct.test_fail(lambda: exact_pictures(1), contains="bins")
    fct.test_fail(lambda: pictures_snapshot(0.0), contains="epsilon")
    fct.test_fail(lambda: pictures_snapshot(1.0, 1), contains="bins")


def test_r_dppca_loader_refusals():
    "The R dppca tables' loader refuses an unknown name and groups the adult table lacks (nbs/02_data/01_r_dppca)."
    from dppca_nb.data.r_dppca import load_r_dppca
    fct.test_fail(lambda: load_r_dppca("adult", return_groups=True), contains="no group label")
    fct.test_fail(lambda: load_r_dppca("iris"), contains="name")
