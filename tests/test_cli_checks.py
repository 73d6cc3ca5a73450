"""Bad-input checks of the command line's helpers, moved out of the reading flow of nbs/09_cli/00_cli.ipynb (where each
function is explained) and nbs/02_data/02_tables.ipynb (`read_numeric_csv`): each is the notebook's own check, the same
call and the same words in the message. A failing call must raise (any exception, as fastcore's `test_fail`) with
`contains` in its message."""
import io
import sys

import numpy as np
import pytest
from fastcore import test as fct          # fct.test_fail: pytest would collect a bare test_fail

from dppca_nb.algorithms.registry import algorithms
from dppca_nb.cli import (budget_delta, check_output, diagnostics_text, fit_estimator, get_method, method_name,
                          parse_option, read_bounds, read_mean, render_docs)
from dppca_nb.data.tables import read_numeric_csv


@pytest.fixture
def tmp(tmp_path):
    (tmp_path / "a.csv").write_text("x,y,z\n1,2,3\n4,5,6\n")
    return tmp_path


def test_get_method_names_the_choices():
    for a in algorithms().values():                       # every registered method among the choices
        fct.test_fail(lambda: get_method("magic"), contains=method_name(a))  # noqa: B023 (called at once)
    fct.test_fail(lambda: get_method("magic"), contains="--method: unknown method 'magic'; choose one of")


def test_a_text_column_is_named_with_its_row(tmp):
    "A text field: its row (from 1) and column named, and how to leave it out (the CSV reader of --columns / --drop)."
    (tmp / "s.csv").write_text("a,b,kind,c\n1,2,red,3\n4,5,blue,6\n")
    fct.test_fail(lambda: read_numeric_csv(tmp / "s.csv"), contains="DATA row 1, column 'kind': 'red' is not a number "
                  "(choose the numeric columns with --columns or --drop)")


def test_budget_delta_refusals():
    kinds = {a.measure: method_name(a) for a in algorithms().values()}        # one method of each measure
    fct.test_fail(lambda: budget_delta(kinds["approximate"], None), contains="--delta: method")
    fct.test_fail(lambda: budget_delta(kinds["pure"], 1e-5), contains="is pure epsilon-DP; omit --delta")


def test_parse_option_refusals():
    ag = get_method("analyze-gauss")
    for bad in ("0", "-1", "inf", "nan", "big"):
        fct.test_fail(lambda: parse_option(bad, "radius", ag, "--radius"), contains="--radius: expected float > 0")  # noqa: B023 (called at once)
    fct.test_fail(lambda: parse_option("gauss", "noise", ag, "--noise"),
              contains="--noise: expected {'gaussian', 'discrete_gaussian'}, got 'gauss'")


def test_read_numeric_csv_refusals(tmp):
    (tmp / "b.csv").write_text("1,2\n3,4\n")
    (tmp / "c.csv").write_text("1;2;3\n4;5;6\n")
    fct.test_fail(lambda: read_numeric_csv(tmp / "c.csv"), contains="--delimiter ';'")
    # errors count the DATA rows from 1 (the header is not a row) and name the column by its header name, else its number
    (tmp / "d.csv").write_text("a,x\n1,2\n3,4\n5,abc\n"); fct.test_fail(lambda: read_numeric_csv(tmp / "d.csv"), contains="DATA row 3, column 'x': 'abc'")
    (tmp / "d2.csv").write_text("1,2\n3,abc\n"); fct.test_fail(lambda: read_numeric_csv(tmp / "d2.csv"), contains="DATA row 2, column 2: 'abc'")
    (tmp / "e.csv").write_text(""); fct.test_fail(lambda: read_numeric_csv(tmp / "e.csv"), contains="is empty")
    (tmp / "f.csv").write_text("1,2\n3\n"); fct.test_fail(lambda: read_numeric_csv(tmp / "f.csv"), contains="DATA row 2 has 1 fields")
    fct.test_fail(lambda: read_numeric_csv(tmp / "none.csv"), contains="no such file")
    (tmp / "g.csv").write_text("u,v\n1,2\n2,nan\n")
    fct.test_fail(lambda: read_numeric_csv(tmp / "g.csv"), contains="DATA row 2, column 'v': 'nan' is not a finite number")
    (tmp / "g2.csv").write_text("u,v\n1,2\n2,\n"); fct.test_fail(lambda: read_numeric_csv(tmp / "g2.csv"), contains="row 2, column 'v': '' is not a number (an empty field")


def test_read_numeric_csv_column_choice_refusals(tmp):
    (tmp / "b.csv").write_text("1,2\n3,4\n")
    (tmp / "s.csv").write_text("a,b,kind,c\n1,2,red,3\n4,5,blue,6\n")
    fct.test_fail(lambda: read_numeric_csv(tmp / "s.csv", columns="a,zz"), contains="--columns: no column 'zz'; the columns are 'a', 'b', 'kind', 'c'")
    fct.test_fail(lambda: read_numeric_csv(tmp / "s.csv", columns="5"), contains="--columns: column 5 is out of range")
    fct.test_fail(lambda: read_numeric_csv(tmp / "s.csv", columns="a,1"), contains="--columns: column '1' is given twice")
    fct.test_fail(lambda: read_numeric_csv(tmp / "s.csv", drop="1,2,3,4"), contains="--drop: '1,2,3,4' drops every column")
    fct.test_fail(lambda: read_numeric_csv(tmp / "b.csv", columns="a"), contains="--columns: 'a' is not a column number, and the file has no header")


def test_read_numeric_csv_gzip_and_stdin_refusals(tmp, monkeypatch):
    (tmp / "fake.gz").write_text("1,2\n"); fct.test_fail(lambda: read_numeric_csv(tmp / "fake.gz"), contains="is not gzip-compressed")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    fct.test_fail(lambda: read_numeric_csv("-"), contains="standard input is empty")


def test_read_mean_refusals(tmp):
    (tmp / "m_named.csv").write_text("kind,c,b,a\n0,30,20,10\n")
    (tmp / "m_row.csv").write_text("1,2,3\n")
    fct.test_fail(lambda: read_mean(tmp / "m_row.csv", ["a", "b"]), contains="--mean: expected p = 2 numbers")
    fct.test_fail(lambda: read_mean(tmp / "m_named.csv", ["a", "q"]), contains="has no column 'q'")
    fct.test_fail(lambda: read_mean(tmp / "nope.csv", ["a"]), contains="--mean: no such file")
    (tmp / "m_bad.csv").write_text("a,b\n1,x\n"); fct.test_fail(lambda: read_mean(tmp / "m_bad.csv", ["a", "b"]), contains="--mean row 1, column 'b'")


def test_read_bounds_refuses_an_empty_range():
    fct.test_fail(lambda: read_bounds("8:0", ["a"]), contains="--bounds: column 'a': expected finite LO < HI, got 8:0")


def test_check_output_refusals(tmp):
    fct.test_fail(lambda: check_output(tmp / "no_such_dir" / "out.csv"), contains="--out: the folder")
    fct.test_fail(lambda: check_output(tmp), contains="is a directory")
    (tmp / "sub").mkdir(exist_ok=True)
    fct.test_fail(lambda: check_output(tmp / "sub" / ".." / "a.csv", tmp / "a.csv"), contains="is the input file DATA")   # however spelled
    (tmp / "j.csv.json").write_text("1,2\n3,4\n")
    fct.test_fail(lambda: check_output(tmp / "j.csv", tmp / "j.csv.json"), contains="j.csv.json is the input file DATA")  # the sidecar too


def test_fit_estimator_refusals():
    Xi = np.random.default_rng(0).normal(size=(3000, 3)) * [3.0, 1.0, 0.3] + 10.0
    est = fit_estimator("analyze-gauss", Xi, 1, 1.0, 1e-5, radius=8.0, mean_radius=25.0, random_state=0)
    fct.test_fail(lambda: fit_estimator("analyze-gauss", Xi, 1, 1.0, 1e-5, centering="none", mean_radius=3.0),
              contains="--mean-radius: only with a private mean (--centering private)")
    fct.test_fail(lambda: fit_estimator("analyze-gauss", Xi, 4, 1.0, 1e-5), contains="-k: expected an integer between 1 and p = 3")
    fct.test_fail(lambda: fit_estimator("analyze-gauss", Xi, 1, 1.0, 1e-5, gamma=2.0), contains="--gamma: not an option of --method analyze-gauss (methods that take it: dp-threshold-covariance)")
    fct.test_fail(lambda: fit_estimator("analyze-gauss", Xi, 1, 1.0, None), contains="--delta: method 'analyze-gauss' is (epsilon, delta)-DP")
    fct.test_fail(lambda: diagnostics_text(est), contains="release: expected a Release")
    fct.test_fail(lambda: diagnostics_text(object()), contains="release: expected a Release")


def test_render_docs_refuses_an_unknown_notebook(tmp):
    fct.test_fail(lambda: render_docs(tmp / "site", ["no_such_notebook"], api=False), contains="no notebook")


@pytest.fixture
def iris_species(tmp_path):
    "iris.csv with its text column `species`, a public mean of other columns (m_named.csv), and an existing output."
    from sklearn.datasets import load_iris
    iris = load_iris()
    cols = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    rows = [",".join([*(repr(float(v)) for v in r), iris.target_names[t]]) for r, t in zip(iris.data, iris.target)]
    (tmp_path / "iris.csv").write_text(",".join(cols + ["species"]) + "\n" + "\n".join(rows) + "\n")
    (tmp_path / "m_named.csv").write_text("kind,c,b,a\n0,30,20,10\n")
    (tmp_path / "iris_analyze-gauss.csv").write_text("component,a\n1,1.0\n")
    return tmp_path


def run_main(*args):
    "main(args) in this process: (exit status, stdout, stderr), every warning shown."
    from _cli_run import run
    return run(*args, warnings_filter="always")


def test_every_flag_error_names_its_flag(iris_species):
    """`main` returns 2 and writes one line to standard error that names the flag (or DATA, its rows counted from 1); no
    output is written (moved from the reading flow of nbs/09_cli/00_cli/08_commands.ipynb)."""
    d = iris_species
    (d / "iris_bad.csv").write_text((d / "iris.csv").read_text().replace("4.7,3.2,1.3,0.2", "4.7,3.2,oops,0.2", 1))
    fit_ag = ("fit", d / "iris.csv", "--method", "analyze-gauss", "-k", "2", "--epsilon", "1", "--delta", "1e-5", "--drop", "species")
    g_wins = ("fit", d / "iris.csv", "--method", "g-dppca", "-k", "2", "--epsilon", "1", "--delta", "1e-5", "--drop", "species",
              "--pair-transform", "winsorized")          # g-DPPCA winsorizes its pair differences
    new_bad = {
        "--radius not a number": (fit_ag + ("--radius", "big"), "--radius: expected float > 0"),
        "--radius <= 0": (fit_ag + ("--radius", "-1"), "--radius: expected float > 0"),
        "--radius for g-dppca": (("fit", d / "iris.csv", "--method", "g-dppca", "-k", "2", "--epsilon", "1", "--delta", "1e-5",
                                  "--drop", "species", "--radius", "3"), "--radius: not an option of --method g-dppca (methods that take it: "),
        "--centering private, g-dppca": (("fit", d / "iris.csv", "--method", "g-dppca", "-k", "2", "--epsilon", "1", "--delta",
                                          "1e-5", "--drop", "species", "--centering", "private"), "--centering: expected {'none', 'public'}, got 'private'"),
        "--centering public, no --mean": (fit_ag + ("--centering", "public"), "--centering: 'public' needs the public mean: --mean FILE"),
        "--mean, --centering private": (fit_ag + ("--centering", "private", "--mean", d / "m_named.csv"), "--mean: only with --centering public"),
        "--centering wrong word": (fit_ag + ("--centering", "middle"), "--centering: expected {'private', 'public', 'none'}, got 'middle'"),
        "--mean wrong columns": (fit_ag + ("--mean", d / "m_named.csv"), "--mean: "),
        "bad value in row 3": (("fit", d / "iris_bad.csv") + fit_ag[2:], "DATA row 3, column 'petal_length': 'oops' is not a number"),
        "text column": (fit_ag[:-2], "DATA row 1, column 'species': 'setosa' is not a number (choose the numeric columns"),
        "--columns unknown": (fit_ag[:-2] + ("--columns", "petal_width,sepal"), "--columns: no column 'sepal'"),
        "-k too large": (fit_ag[:4] + ("-k", "5") + fit_ag[6:], "-k: expected an integer between 1 and p = 4, got 5"),
        "-k not a number": (fit_ag[:4] + ("-k", "two") + fit_ag[6:], "-k: expected int, float in (0, 1), 'mle' or None, got 'two'"),
        "--epsilon <= 0": (fit_ag[:6] + ("--epsilon", "0") + fit_ag[8:], "--epsilon: expected float > 0 or inf, got '0'"),
        "--delta missing": (fit_ag[:8] + fit_ag[10:], "--delta: method 'analyze-gauss' is (epsilon, delta)-DP and needs --delta"),
        "--delta for pure": (("fit", d / "iris.csv", "--method", "pure-dp-pca", "-k", "2", "--epsilon", "1", "--delta", "1e-5",
                              "--drop", "species"), "--delta: method 'pure-dp-pca' is pure epsilon-DP; omit --delta"),
        "--out is DATA": (fit_ag + ("--out", d / "iris.csv"), "--out: " + str(d / "iris.csv") + " is the input file DATA"),
        "--out folder missing": (fit_ag + ("--out", d / "nowhere" / "c.csv"), "--out: the folder"),
        "--out a folder": (fit_ag + ("--out", d), "--out: " + str(d) + " is a directory"),
        "--out exists": (fit_ag + ("--out", d / "iris_analyze-gauss.csv"), "iris_analyze-gauss.csv exists; add --force to overwrite it"),
        "--scale, no --bounds": (fit_ag + ("--scale", "private"), "--bounds: --scale private needs public bounds of every column"),
        "--scale, a local method": (("fit", d / "iris.csv", "--method", "local-gaussian-pca", "-k", "2", "--epsilon", "1", "--delta",
                                     "1e-5", "--drop", "species", "--scale", "private", "--bounds", "0:8"), "--scale: 'private' is a central release"),
        "--scale, pure, no --delta": (("fit", d / "iris.csv", "--method", "pure-dp-pca", "-k", "2", "--epsilon", "1", "--drop", "species",
                                       "--scale", "private", "--bounds", "0:8"), "--delta: --scale private is an (epsilon, delta) release"),
        "--scale-share 1": (fit_ag + ("--scale", "private", "--bounds", "0:8", "--scale-share", "1"), "--scale-share: expected a share in (0, 1)"),
        "--bounds, too few": (fit_ag + ("--bounds", "0:8,0:8"), "--bounds: expected one LO:HI for every column, or p = 4 of them, got 2"),
        "--bounds, no file": (fit_ag + ("--bounds", "ranges.csv"), "--bounds: no such file: ranges.csv"),
        "--scheduler bad": (("reproduce", "--only", "mechanisms_calibration", "--scheduler", "somewhere"), "--scheduler: expected 'local' or"),
        "--cull-idle-timeout 0": (("app", "--no-browser", "--cull-idle-timeout", "0"), "--cull-idle-timeout: expected a positive"),
        "--winsorization-radius, AG": (fit_ag + ("--winsorization-radius", "2"),
                                       "--winsorization-radius: not an option of --method analyze-gauss (methods that take it: g-dppca)"),
        "--winsorization-radius <= 0": (g_wins + ("--winsorization-radius", "-1"), "--winsorization-radius: expected"),
        "--winsorization-radius text": (g_wins + ("--winsorization-radius", "wide"), "--winsorization-radius: expected"),
    }
    for what, (args, expect) in new_bad.items():
        out_given = "--out" in args or args[0] != "fit"
        rc, out, err = run_main(*args, *(() if out_given else ("--out", d / "never.csv")))
        assert rc == 2 and len(err.strip().splitlines()) == 1, (what, rc, err)
        assert expect in err, (what, err)
    assert not (d / "never.csv").exists()
