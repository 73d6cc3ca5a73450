"`dppca fit`'s standard output (--format, --out -), wide tables, --delta >= 1/n, the headers and the rows advice."
# ruff: noqa: F811  (iris: the fixture of test_cli, imported)
import csv
import io
import json
import types
from pathlib import Path

import numpy as np
import pytest

from dppca_nb import estimators as E
from dppca_nb.core.linalg import random_subspace_level
from tests.test_cli import run, iris, fit, record   # noqa: F401  (iris: the fixture)


def test_out_dash_writes_no_file(iris, tmp_path, monkeypatch):
    "--out - and --out /dev/stdout: the output on standard output, no file `-`, `-.json` or /dev/stdout.json."
    monkeypatch.chdir(tmp_path)
    for out in ("-", "/dev/stdout"):
        rc, text, err = run("fit", iris / "iris.csv", "--method", "analyze-gauss", "-k", "2", "--epsilon", "1",
                            "--delta", "1e-5", "--seed", "0", "--out", out)
        assert rc == 0, err
        assert "sepal_length" in text and "Privacy:" in text and "Wrote" not in text
    assert list(tmp_path.iterdir()) == [] and not Path("/dev/stdout.json").exists()


def test_format_json_is_the_record_and_csv_parses(iris):
    "--format json prints the record OUT.json holds; --format csv: one row per component, named columns, parseable."
    rc, text, err = fit(iris, "--format", "json", out="j.csv")
    assert rc == 0, err
    assert json.loads(text) == record(iris, "j.csv")
    rc, text, err = fit(iris, "--format", "csv", out="-")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rc == 0 and len(rows) == 2, err
    assert list(rows[0])[:5] == ["component", "sepal_length", "sepal_width", "petal_length", "petal_width"]
    V = np.array([[float(r[c]) for c in list(rows[0])[1:5]] for r in rows])
    np.testing.assert_allclose(V @ V.T, np.eye(2), atol=1e-12)     # the loadings in full precision: orthonormal
    rec = json.loads(fit(iris, "--format", "json", out="-")[1])     # same seed, same release
    assert [float(r["variance"]) for r in rows] == pytest.approx(rec["released"]["eigenvalues"][:2])
    assert rows[0]["guarantee"].startswith("Privacy: (1, 1e-05)-DP")


def test_wide_table_wraps_and_cuts_nothing(tmp_path):
    "45 columns and 12 components: every column name and component printed, no line wider than TABLE_WIDTH."
    from dppca_nb.cli import TABLE_WIDTH
    X = np.random.default_rng(0).standard_normal((300, 45)) / 10
    names = [f"measurement_{j}" for j in range(45)]
    np.savetxt(tmp_path / "w.csv", X, delimiter=",", header=",".join(names), comments="")
    rc, text, err = run("fit", tmp_path / "w.csv", "--method", "analyze-gauss", "-k", "12", "--epsilon", "1",
                        "--delta", "1e-6", "--seed", "0", "--out", "-")
    assert rc == 0, err
    table = text.split("\n\n")[1:-1]
    assert all(f"component {i}" in text for i in range(1, 13)) and "more" not in text
    assert all(text.count(f"{x} ") + text.count(f"{x}\n") >= 2 for x in names)    # each name in each block (2 blocks)
    assert max(len(line) for block in table for line in block.splitlines()) <= TABLE_WIDTH


def test_delta_at_least_one_over_n(iris):
    "--delta >= 1/n (n = 150 here) is refused naming --delta; --allow-large-delta runs, warning on standard error."
    rc, _, err = fit(iris, delta="0.3")
    assert rc == 2 and "--delta 0.3 is at least 1/n" in err and "--allow-large-delta" in err
    rc, _, err = fit(iris, delta=str(1 / 150))
    assert rc == 2, err
    rc, out, err = fit(iris, "--allow-large-delta", delta="0.3")
    assert rc == 0 and "running anyway" in err
    assert fit(iris, delta=str(0.99 / 150))[0] == 0


def test_partly_degenerate_header_reads_forwards():
    from dppca_nb.cli import result_text
    rec = dict(method="dp-threshold-covariance", inputs=dict(k=3, p=3, n=10, columns=["a", "b", "c"]),
               components=dict(ordered=True), contract=dict(epsilon=1.0), random_level=1.15, location_invariant=False,
               released=dict(components=np.eye(3).tolist(), eigenvalues=[2.0, 0.0, 0.0], expected_error=None),
               privacy=dict(sentence="Privacy: ..."))
    head = result_text(rec, "c.csv").splitlines()[0]
    assert "component 1 stands above the noise, and components 2 to 3 have released variance 0" in head


def test_sgpca_not_worst_case_first(iris):
    rc, out, err = fit(iris, method="sgpca")
    assert rc == 0, err
    assert next(x for x in out.splitlines() if x.startswith("Privacy:")).startswith("Privacy: NOT worst-case DP: (")


def test_noise_shrink_needed():
    "1/s falls to 0.25 at s = 4 (bisection to 1e-9 relative); an error that never falls gives None."
    assert E.noise_shrink_needed(lambda s: 1 / s, 0.25) == pytest.approx(4, rel=1e-9)
    assert E.noise_shrink_needed(lambda s: 1.0, 0.25) is None


def test_rows_advice_is_a_number_of_rows_not_a_multiple_of_n():
    """The same data (spectrum) at n = 3, 6, 12 rows, its noise sd 3/n (central: 1/n): the rows advised are the same
    number, the one where the error model reaches half the warning level, and not a fixed multiple of n."""
    spectrum, need = np.array([1.0, .5, .2, .1]), []
    level = random_subspace_level(4, 1)
    for n in (3, 6, 12):
        o = types.SimpleNamespace(n_samples_=n, n_components_=1, epsilon=1.0,
                                  _algorithm=lambda: types.SimpleNamespace(model="central"))
        sp = (spectrum, 1.8, None, 3.0 / n)
        advice = E._utility_advice(o, level, level, sp)
        assert advice.text().split()[1] == str(advice.rows)          # the number printed is the field's
        need.append(advice.rows)
    assert max(need) - min(need) <= 1, need                     # rounding up of the same number of rows
    sd = lambda m: 3.0 / m / __import__("dppca_nb.privacy.mechanisms", fromlist=["NOISE_SHAPES"]).NOISE_SHAPES["vecd"].offdiag
    target = 0.5 * E.UTILITY_LEVEL * level
    assert E.expected_subspace_error(spectrum, 1, sd(need[0]))[0] <= target * (1 + 1e-6)
    assert E.expected_subspace_error(spectrum, 1, sd(need[0] - 1))[0] > target


def test_rows_advice_without_a_gap():
    o = types.SimpleNamespace(n_samples_=10, n_components_=1, epsilon=1.0,
                              _algorithm=lambda: types.SimpleNamespace(model="central"))
    advice = E._utility_advice(o, 1.2, 1.2, (np.zeros(4), 0.0, None, 0.5))
    assert "resolve no gap" in advice.text() and advice.rows is None and advice.epsilon is None


def test_an_unestimated_error_is_a_published_utility_warning(iris):
    "A release whose error is not estimated says so in a UtilityWarning, on standard error and in the public record."
    rc, out, err = fit(iris, method="pure-dp-subspace", delta=None, out="u.csv")
    assert rc == 0, err
    rec = record(iris, "u.csv")
    if rec["released"]["expected_error"] is None:
        said = [w for w in rec["warnings"] + rec["released"]["warnings"] if "expected error is not estimated" in w]
        assert len(said) == 1 and said[0].startswith("UtilityWarning") and said[0] in err, (said, err)
    else:                                                       # this seed estimated it: no such warning
        assert "is not estimated" not in err
    rc, out, err = fit(iris, "--epsilon", "inf", method="pure-dp-subspace", delta=None, out="u.csv")
    assert rc == 0 and "is not estimated" not in err            # the non-private limit: nothing to estimate


def test_pure_subspace_fails_fast_with_a_suggestion(tmp_path):
    """breast cancer's shape (569 x 30, -k 3, epsilon 1): predicted from public quantities to need ~1e13 proposals in the
    worst case, so refused before any private work (no file written), suggesting pure-dp-pca, -k and --max-trials."""
    X = np.random.default_rng(0).standard_normal((569, 30)) / 10
    np.savetxt(tmp_path / "b.csv", X, delimiter=",")
    rc, _, err = run("fit", tmp_path / "b.csv", "--method", "pure-dp-subspace", "-k", "3", "--epsilon", "1",
                     "--out", tmp_path / "c.csv")
    assert rc == 2, err                                          # before the draw: nothing sampled, nothing spent
    assert "predicted to need up to" in err and "pure-dp-pca" in err and "-k 1 fits" in err and "--max-trials" in err
    assert not (tmp_path / "c.csv").exists()
    from dppca_nb.cli import refuse_slow_draw, get_method
    refuse_slow_draw(get_method("pure-dp-subspace"), {"max_trials": 10}, 569, 30, 3, 1.0)   # insisted: no refusal
    refuse_slow_draw(get_method("pure-dp-pca"), {}, 569, 30, 3, 1.0)                        # no single draw: none
