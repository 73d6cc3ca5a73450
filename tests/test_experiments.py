"""Bad input to the study framework (the study table, the runner, the claims, the checks and the report): each error names
the argument and what was expected.

(The reading flow of nbs/07_experiments/00_framework/ shows what the functions do; these are the refusals.)"""
import sys
from unittest import mock

import pandas as pd
import pytest

from dppca_nb.experiments.study import Check, Claim, Study, expand_grid, get_study, register_study
from dppca_nb.experiments.runner import _progress_bar, run_study
from dppca_nb.experiments.claims import Mean
from dppca_nb.experiments.checks import bounds_table
from dppca_nb.experiments.report import plot_lines, reproduce


def _toy(point, rng):
    return {"x": float(rng.normal(point["mu"], 1.0))}


TOY = Study("toy_bad_input", "demo", _toy, grid={"quick": {"mu": [0, 1]}}, reps={"quick": 2})


def test_grid_and_registry():
    with pytest.raises(TypeError, match="grid: expected"): expand_grid(3)
    with pytest.raises(KeyError, match="not registered"): get_study("no_such_study")
    with pytest.raises(TypeError, match="study: expected a Study"): register_study("toy")
    with pytest.raises(TypeError, match="study.claims: expected Claim"):
        register_study(Study("bad_claims", "demo", _toy, grid={"quick": {"mu": [0]}}, claims=("a sentence",)))


def test_runner_arguments(tmp_path):
    for jobs in (True, 0):
        with pytest.raises((TypeError, ValueError), match="jobs: expected a positive integer"):
            run_study(TOY, use_cache=False, progress=False, jobs=jobs)
    with pytest.raises(ValueError, match="mode"): run_study(TOY, mode="huge", use_cache=False)
    bad = Study("bad", "demo", lambda p, r: 3, {"quick": {"a": [1]}})
    with pytest.raises(TypeError, match="dict or a list of dicts"): run_study(bad, use_cache=False, progress=False)
    for scheduler in ("dask", 4):
        with pytest.raises(ValueError, match="scheduler: expected None"): run_study(TOY, scheduler=scheduler, use_cache=False)


def test_optional_dependencies(tmp_path):
    with mock.patch.dict(sys.modules, {"dask.distributed": None}):      # without dask.distributed: the extra to install
        with pytest.raises(ImportError, match=r"pip install 'dppca_nb\[dask\]'"):
            run_study(TOY, scheduler="local", use_cache=False)
    df = run_study(TOY, cache_dir=tmp_path, progress=False)
    with mock.patch.dict(sys.modules, {"tqdm": None, "tqdm.auto": None}):  # tqdm is optional: no bar, the same run
        assert _progress_bar(10, 0, "x", True) is None
        pd.testing.assert_frame_equal(run_study(TOY, cache_dir=tmp_path, progress=True), df)


def test_plot_lines_colors():
    df = pd.DataFrame({"mu": [0, 0, 1, 1], "x": [1.0, 2.0, 3.0, 4.0], "method": ["a", "b", "a", "b"]})
    with pytest.raises(ValueError, match=r"colors: no colour for the method values \['b'\]"):
        plot_lines(df, "mu", "x", hue="method", colors={"a": "C3"})
    with pytest.raises(ValueError, match="colors: needs hue"): plot_lines(df, "mu", "x", colors={"a": "C3"})


def test_checks_and_claims():
    with pytest.raises(ValueError, match="no_bound"): Check("x", {})
    with pytest.raises(ValueError, match="error_bounds method"): Check("x", {}, bound={"n": 3})
    with pytest.raises(ValueError, match="minimax model"): Check("x", {}, no_bound="none", minimax={"n": 3})
    df = pd.DataFrame({"mu": [0, 1], "rep": [0, 0], "x": [0.1, 0.2]})
    with pytest.raises(KeyError, match="no column 'zz'"):
        bounds_table(TOY, df, checks=[Check("x", {"zz": 1}, metric="x", no_bound="none")])
    with pytest.raises(KeyError, match="no column 'zz'"): Claim("x", Mean({"zz": 1}, "x")).quantity.evaluate(df)


def test_reproduce_unknown_study(tmp_path):
    with pytest.raises(KeyError, match="unknown studies"): reproduce(tmp_path, studies={"toy": TOY}, only=["nope"])
