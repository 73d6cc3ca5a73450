"""`dppca fit` as a user runs it: what standard output shows, what --explain and the record add, the flags of the
private scaler, the public bounds and the private radius, --method's spellings, --force, warnings once each, and the
real-tables report of tools/real_tables.py.

Each run goes through `dppca_nb.cli.main` in this process (the entry point's own code), on scikit-learn's bundled iris
table written to CSV with a header.
"""
import contextlib
import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from dppca_nb.cli import main, get_method, method_name, option_flags, fit_options, parameters_of
from dppca_nb.algorithms.registry import algorithms, parameter

ROOT = Path(__file__).resolve().parents[1]
COLS = ["sepal_length", "sepal_width", "petal_length", "petal_width"]


from _cli_run import run  # noqa: E402 (the shared in-process runner)


@pytest.fixture(scope="module")
def iris(tmp_path_factory):
    "iris.csv (a header, 150 x 4) and iris_bounds.csv (the documented min and max of each column) in a fresh folder."
    from sklearn.datasets import load_iris
    d = tmp_path_factory.mktemp("iris")
    X = load_iris().data
    np.savetxt(d / "iris.csv", X, delimiter=",", header=",".join(COLS), comments="", fmt="%.17g")
    B = np.array([[4.3, 2.0, 1.0, 0.1], [7.9, 4.4, 6.9, 2.5]])      # load_iris().DESCR's summary statistics
    np.savetxt(d / "iris_bounds.csv", B, delimiter=",", header=",".join(COLS), comments="", fmt="%g")
    return d


def fit(folder, *extra, method="analyze-gauss", out="c.csv", delta="1e-5"):
    args = ["fit", folder / "iris.csv", "--method", method, "-k", "2", "--epsilon", "1", "--seed", "0",
            "--out", folder / out, "--force", *extra]
    if delta is not None: args += ["--delta", delta]
    return run(*args)


def record(folder, out="c.csv"):
    return json.loads((folder / (out + ".json")).read_text())


def test_stdout_prints_the_result(iris):
    "Components with the column names, variance shares, the expected error line, one plain sentence of the guarantee."
    rc, out, err = fit(iris)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("analyze-gauss: 2 components of 4 columns from 150 rows")
    rec = record(iris)
    V = np.array(rec["released"]["components"])
    for j, c in enumerate(COLS):                    # one line per column: its name, then its loading in each component
        row = next(ln for ln in lines if ln.startswith(c))
        np.testing.assert_allclose([float(x) for x in row.split()[1:]], V[:, j], atol=5e-4)
    share = next(ln for ln in lines if ln.startswith("variance share"))
    np.testing.assert_allclose([float(x) for x in share.split()[2:]], rec["released"]["variance_share"], atol=5e-4)
    assert any(ln.startswith("Expected error") for ln in lines)
    assert f"a random subspace scores {rec['random_level']:.2f}" in out
    sentence = next(ln for ln in lines if ln.startswith("Privacy: "))
    assert sentence == rec["privacy"]["sentence"]
    # it names what was released privately, each with its share of the budget, and the shares sum to 100%
    pcts = [float(x) for x in re.findall(r"\(([\d.]+)%\)", sentence)]
    assert len(pcts) == len(rec["privacy"]["parts"]) >= 2 and abs(sum(pcts) - 100) < 0.2 * len(pcts)
    assert "the mean (" in sentence and ("the covariance (" in sentence or "the components (" in sentence)
    # the jargon stays under --explain: no statement, no mechanism names, no parts list on standard output
    assert rec["privacy"]["statement"] not in out and "vecd" not in out and "split_budget" not in out
    assert all(ln.startswith("dppca fit: warning: ") for ln in err.splitlines())     # stderr: warnings only


def test_explain_and_record_hold_the_statement_and_parts(iris):
    rc, out, err = fit(iris, "--explain")
    assert rc == 0, err
    rec = record(iris)
    pv = rec["privacy"]
    assert "The guarantee in full: " + pv["statement"] in out and "The budget's parts:" in out
    assert "How they compose:" in out and all(s in out for s in pv["composition"])
    assert abs(sum(p["share"] for p in pv["parts"]) - 1) < 1e-9
    for p in pv["parts"]: assert p["what"] in out and p["guarantee"] and p["mechanism"]
    # how the parts compose, in words: a private mean beside the covariance composes exactly (their epsilons sum to
    # more than the total, and the sentence says why)
    assert any("composed exactly" in s and "basic composition" in s for s in pv["composition"])
    rc0, out0, _ = fit(iris)
    assert out.startswith(out0)                     # --explain only adds


def test_centering_none_and_public_say_different_things(iris):
    (iris / "mean.csv").write_text(",".join(COLS) + "\n5.8,3.0,3.8,1.2\n")
    _, a, _ = fit(iris, "--centering", "none", out="a.csv")
    _, b, _ = fit(iris, "--centering", "public", "--mean", iris / "mean.csv", out="b.csv")
    line = lambda text: next(ln for ln in text.splitlines() if ln.startswith("Rows "))
    assert "not centered" in line(a) and "public mean" in line(b)


def test_scale_private_with_bounds_file_and_flag(iris):
    rc, out, err = fit(iris, "--scale", "private")
    assert rc == 2 and "--bounds: --scale private needs public bounds" in err
    rc, out, err = fit(iris, "--scale", "private", "--bounds", iris / "iris_bounds.csv")
    assert rc == 0, err
    rec = record(iris)
    assert rec["inputs"]["scale"] == "private" and "in standardized units" in out.splitlines()[0]
    np.testing.assert_allclose(rec["inputs"]["bounds"]["lo"], [4.3, 2.0, 1.0, 0.1])
    assert [p["what"] for p in rec["privacy"]["parts"]][0] == "the column means and scales"
    half = rec["privacy"]["parts"][0]["share"]            # --scale-share 0.5 (the default): of epsilon, or of mu^2
    assert 0 < half < 1 and abs(sum(p["share"] for p in rec["privacy"]["parts"]) - 1) < 1e-9
    assert re.search(r"the column means and scales \(\d+(\.\d)?%\)", out)
    # the same bounds as a flag give the same record (same seed, same numbers)
    rc, out2, err = fit(iris, "--scale", "private", "--bounds", "4.3:7.9,2:4.4,1:6.9,0.1:2.5", out="f.csv")
    assert rc == 0, err
    np.testing.assert_allclose(record(iris, "f.csv")["released"]["components"], rec["released"]["components"])
    rc, out3, err = fit(iris, "--scale", "private", "--bounds", iris / "iris_bounds.csv", "--scale-share", "0.25",
                        out="s.csv")
    assert rc == 0 and record(iris, "s.csv")["inputs"]["scale_share"] == 0.25
    assert record(iris, "s.csv")["privacy"]["parts"][0]["share"] < half      # a smaller share of the budget


def test_bounds_set_the_norm_bound(iris):
    rc, out, err = fit(iris, "--bounds", "0:8", "--centering", "none")
    assert rc == 0, err
    rec = record(iris)
    assert rec["inputs"]["radius_from"] == "--bounds" and abs(rec["inputs"]["radius"] - 16.0) < 1e-12   # ||(8,8,8,8)||
    assert "the largest norm the public --bounds allow" in out


def test_private_radius_options_are_flags(iris):
    "The private radius's options (radius_bounds, radius_share) are flags, read by the parameter table."
    rc, out, err = fit(iris, "--radius", "private", "--radius-bounds", "0.5,50", "--radius-share", "0.2")
    assert rc == 0, err
    rec = record(iris)
    assert rec["inputs"]["radius"] == "private"
    assert rec["inputs"]["radius_bounds"] == [0.5, 50.0] and rec["inputs"]["radius_share"] == 0.2
    assert "released" in out and "radius" in rec["released"]          # the released bound is printed and recorded
    assert f"norm <= {rec['released']['radius']:.4g}" in out
    assert "the norm bound" in rec["privacy"]["sentence"]
    rc, _, err = fit(iris, "--radius", "private", "--radius-share", "2")
    assert rc == 2 and err.count("\n") == 1 and "--radius-share" in err


@pytest.mark.parametrize("name", ["analyze_gauss", "AnalyzeGaussPCA", "analyze-gauss"])
def test_method_python_spelling(iris, name):
    rc, out, err = fit(iris, method=name, out=f"{name}.csv")
    assert rc == 0, err
    assert record(iris, f"{name}.csv")["algorithm"] == "analyze_gauss"


def test_method_adaptive_and_pure_subspace(iris):
    "--method adaptive runs the registered adaptive algorithm; PureDPSubspace is reachable from the command line."
    assert get_method("adaptive").key == "adaptive_dp_kpca"
    rc, out, err = fit(iris, method="adaptive", out="ad.csv")
    assert rc == 0, err
    assert record(iris, "ad.csv")["algorithm"] == "adaptive_dp_kpca" and out.startswith("adaptive-dp-kpca: 2 components")
    for name in ("pure-dp-subspace", "PureDPSubspace", "pure_dp_subspace"):
        rc, out, err = fit(iris, method=name, out="ps.csv", delta=None)
        assert rc == 0, (name, err)
        rec = record(iris, "ps.csv")
        assert rec["estimator"] == "PureDPSubspace" and rec["contract"]["delta"] == 0
        # its basis, ordered by the variances --order-share (default 0.1) bought: components, said so
        assert "component 1" in out and "decreasing order" in out.splitlines()[0] and rec["components"]["ordered"]


def test_nothing_overwritten_without_force(iris):
    target = iris / "keep.csv"
    target.write_text("mine\n")
    rc, _, err = run("fit", iris / "iris.csv", "--method", "analyze-gauss", "-k", "2", "--epsilon", "1", "--delta",
                     "1e-5", "--out", target)
    assert rc == 2 and "--out" in err and "--force" in err and target.read_text() == "mine\n"
    assert not Path(str(target) + ".json").exists()
    Path(str(target) + ".json").write_text("{}")                # the sidecar alone is protected too
    target.unlink()
    rc, _, err = run("fit", iris / "iris.csv", "--method", "analyze-gauss", "-k", "2", "--epsilon", "1", "--delta",
                     "1e-5", "--out", target)
    assert rc == 2 and "keep.csv.json exists" in err and not target.exists()
    rc, _, err = run("fit", iris / "iris.csv", "--method", "analyze-gauss", "-k", "2", "--epsilon", "1", "--delta",
                     "1e-5", "--out", target, "--force")
    assert rc == 0 and target.exists()


def test_each_warning_once_without_source_line(iris):
    "Warnings on standard error: each once, `dppca fit: warning: Category: text`, flags named, no source line."
    rc, out, err = fit(iris, "--radius", "private", "--radius-bounds", "0.001,1e6", "--radius-share", "0.01")
    assert rc == 0
    lines = err.splitlines()
    assert lines and len(lines) == len(set(lines))
    for ln in lines:
        assert re.match(r"dppca fit: warning: [A-Z]\w+Warning: ", ln), ln
        assert ".py:" not in ln and "warnings.warn" not in ln
    assert any("--radius-bounds" in ln or "--radius-share" in ln for ln in lines)   # parameters written as flags
    assert "Warning" not in out                                                      # never on standard output


def test_options_come_from_the_parameter_table():
    "Every flag of fit's methods is its parameter's cli_flag, one parameter per flag; nothing transitional remains."
    seen = {}
    for alg in algorithms().values():
        for flag, name in fit_options(alg).items():
            assert parameter(name, parameters_of(alg)).cli_flag == flag
            assert seen.setdefault(flag, name) == name
        for name in set(alg.options) - {"n_components", "epsilon", "delta", "random_state", "mean"}:
            # every option of the planner is described; it is a flag of fit unless the table gives it none
            assert name in fit_options(alg).values() or parameter(name, alg.parameters).cli_flag is None, (alg.key, name)
    assert set(option_flags()) == set(seen)
    src = "".join(p.read_text() for p in sorted((ROOT / "dppca_nb" / "cli").glob("*.py")))
    assert "TRANSITION" not in src and "_described" not in src and "spatial_sign" not in src


def test_real_tables_report():
    "reports/real_tables.csv: every method on the four tables, distances in [0, sqrt(2k)], the random level right."
    path = ROOT / "reports" / "real_tables.csv"
    rows = list(csv.DictReader(path.open()))
    assert {r["table"] for r in rows} == {"iris", "wine", "breast_cancer", "diabetes"}
    assert {r["method"] for r in rows} == {method_name(a) for a in algorithms().values()}
    ran = [r for r in rows if not r["refused"]]
    assert len(ran) >= len(rows) // 2
    for r in ran:
        k, p = 2, int(r["p"])
        assert abs(float(r["random"]) - np.sqrt(2 * k * (1 - k / p))) < 1e-3
        assert 0 <= float(r["measured"]) <= 2.0 + 1e-6                 # ||P - Q||_F <= sqrt(2k)
        assert int(r["noise"]) == (float(r["measured"]) >= 0.7 * float(r["random"]))
    # local methods refuse --scale private (a central release) with a message naming --scale
    assert all(r["refused"].startswith("--scale") for r in rows if r["method"].startswith("local") and r["scale"] == "private")


def test_real_tables_tool_reproduces_a_row(tmp_path):
    "Same seed, same numbers: the tool's run of iris with Analyze Gauss at epsilon 1 is the committed row."
    import importlib.util
    spec = importlib.util.spec_from_file_location("real_tables", ROOT / "tools" / "real_tables.py")
    rt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rt)
    tables = rt.write_tables(tmp_path)
    row = rt.one_run(tmp_path, tables["iris"], "iris", "analyze-gauss", "none", 1.0, 0)
    ref = next(r for r in csv.DictReader((ROOT / "reports" / "real_tables.csv").open())
               if (r["table"], r["method"], r["scale"], float(r["epsilon"]), r["seed"]) == ("iris", "analyze-gauss", "none", 1.0, "0"))
    assert abs(row["measured"] - float(ref["measured"])) < 1e-4


CENTRAL_SUBSPACE = [method_name(a) for a in algorithms().values() if a.model == "central" and a.output == "subspace"]


@pytest.mark.parametrize("method", CENTRAL_SUBSPACE)
def test_scale_private_spends_the_whole_budget(iris, method):
    """--scale private: the pipeline's certified total is the user's (epsilon, delta), to 1e-3, and never more; where the
    clipping check finds no turn defined (a released variance not above the rest's) its share 0.1 is unspent, and said."""
    for eps in ("1", "0.3"):
        rc, out, err = run("fit", iris / "iris.csv", "--method", method, "-k", "2", "--epsilon", eps, "--delta", "1e-6",
                           "--seed", "0", "--out", iris / "b.csv", "--force", "--scale", "private",
                           "--bounds", iris / "iris_bounds.csv", "--explain")
        assert rc == 0, err
        rec = record(iris, "b.csv")
        e, d = rec["contract"]["epsilon"], rec["contract"]["delta"]
        unspent = "its share 0.1 of epsilon is unspent" in (rec["released"]["expected_error_note"] or "")
        assert unspent == ("clipping_turn" not in rec["contract"]["parts"] and "radius" in rec["inputs"])
        whole = float(eps) * (0.9 if unspent else 1.0)
        assert whole - 1e-3 <= e <= whole and d <= 1e-6 * (1 + 1e-12), (e, d)
        assert rec["inputs"]["epsilon"] == e and abs(d - 1e-6) < 1e-15
        # the printed sentence, --explain and the record agree on the total
        g = rec["guarantee"]
        said = g if "NOT worst-case" not in g else "NOT worst-case DP: " + g.replace(", NOT worst-case DP", "")
        assert f"Privacy: {said} for all" in out and g in rec["privacy"]["statement"] and f"Released under {g}" in out
        assert g.startswith(f"({whole:g}, 1e-06)-DP"), g


@pytest.mark.parametrize("method,delta", [("smooth-sensitivity-pca", "1e-5"), ("pure-dp-subspace", None)])
def test_ordered_is_what_the_fit_did(iris, method, delta):
    "A subspace method that spent --order-share on ordering its basis prints and records ordered components; 0: not."
    rc, out, err = fit(iris, method=method, delta=delta, out="o.csv")
    assert rc == 0, err
    rec = record(iris, "o.csv")
    assert rec["components"]["ordered"] is True and "in decreasing order of private variance" in out.splitlines()[0]
    assert rec["inputs"]["order_share"] == 0.1 and "component 1" in out and "in no order" not in out
    assert (iris / "o.csv").read_text().startswith("component,")
    share = rec["released"]["variance_share"]
    assert all(a >= b for a, b in zip(share, share[1:]))            # printed in decreasing order
    rc, out, err = fit(iris, "--order-share", "0", method=method, delta=delta, out="o.csv")
    assert rc == 0, err
    rec = record(iris, "o.csv")
    assert rec["components"]["ordered"] is False and "in no order" in out.splitlines()[0] and "basis 1" in out
    assert rec["inputs"]["order_share"] == 0.0 and (iris / "o.csv").read_text().startswith("basis vector (unordered),")


def test_location_flags(iris):
    "--location and --location-share set the private coarse location's use and share; the record and --explain show it."
    rc, out, err = fit(iris, "--location", "private", "--location-share", "0.2", "--explain")
    assert rc == 0, err
    rec = record(iris)
    assert rec["inputs"]["location"] == "private" and rec["inputs"]["location_share"] == 0.2
    assert "the coarse location (20%)" in out
    rc, out, err = fit(iris, "--location", "none")
    assert rc == 0 and "coarse location" not in out and record(iris)["inputs"]["location"] == "none"
    rc, out, err = fit(iris, "--location", "somewhere")
    assert rc == 2 and "--location: expected" in err
    rc, out, err = fit(iris, "--order-share", "0.2")
    assert rc == 2 and "--order-share: not an option of --method analyze-gauss" in err


@pytest.mark.parametrize("method", ["analyze-gauss", "gaussian-covariance"])
def test_scaled_warning_says_the_printed_error_in_the_users_terms(iris, method):
    "--scale private: one UtilityWarning, with the expected error stdout prints, advising rows and the whole --epsilon."
    rc, out, err = fit(iris, "--scale", "private", "--bounds", iris / "iris_bounds.csv", delta="1e-6", method=method)
    assert rc == 0, err
    rec = record(iris)
    printed = re.search(r"^Expected error ([\d.]+) \(likely ([\d.]+) to ([\d.]+)\)", out, re.M).groups()
    warned = [w for w in err.splitlines() if "UtilityWarning" in w]
    assert len(warned) == 1, err
    said = re.search(r"the expected error ([\d.]+) \(likely ([\d.]+) to ([\d.]+)\)", warned[0]).groups()
    assert said == printed, (said, printed)
    m = re.search(r"about (\d+) rows instead of 150, or --epsilon about ([\d.]+) \(the whole budget\)", warned[0])
    assert m and float(m[2]) > 1 and " epsilon about" not in warned[0].replace("--epsilon about", "")
    # the record keeps it with the released values, and says where the warnings are
    assert rec["released"]["warnings"] == [warned[0].removeprefix("dppca fit: warning: ")]
    assert "released.warnings" in rec["warnings_note"] and rec["warnings"] == []


def test_radius_bounds_formats_and_what_the_warning_names(iris):
    "--radius-bounds takes LO:HI (as --bounds) and LO,HI; a warning names only the flags typed."
    rc, out, err = fit(iris, "--radius", "private", "--radius-bounds", "0.5:50", out="r1.csv")
    assert rc == 0, err
    rc, out2, err2 = fit(iris, "--radius", "private", "--radius-bounds", "0.5,50", out="r2.csv")
    assert rc == 0, err2
    assert record(iris, "r1.csv")["inputs"]["radius_bounds"] == record(iris, "r2.csv")["inputs"]["radius_bounds"] == [0.5, 50.0]
    assert out.replace("r1.csv", "r2.csv") == out2                      # the same run, however the range is written
    rc, _, bad = fit(iris, "--radius", "private", "--radius-bounds", "0.5-50")
    assert rc == 2 and "--radius-bounds: expected LO:HI (or LO,HI) or none, got '0.5-50'" in bad
    help_ = io.StringIO()
    with contextlib.redirect_stdout(help_), pytest.raises(SystemExit): main(["fit", "--help"])
    assert "--radius-bounds LO:HI" in help_.getvalue() and "LO:HI or LO,HI" in " ".join(help_.getvalue().split())
    # only --radius typed: the mean's radius follows it, and no warning names --mean-radius
    assert "--mean-radius" not in err and "the mean's radius, which follows --radius private" in err
    rc, out, err = fit(iris, "--radius", "private", "--mean-radius", "private", "--radius-bounds", "0.5:50")
    assert rc == 0 and "--mean-radius private spends" in err           # typed: named


def test_k_mle_and_epsilon_inf(iris):
    "-k mle and --epsilon inf, as the estimators take them; inf is said plainly to be not private."
    rc, out, err = run(
        "fit", iris / "iris.csv", "--method", "analyze-gauss", "-k", "mle", "--epsilon", "20", "--delta", "1e-5",
        "--seed", "0", "--out", iris / "m.csv", "--force", "--bounds", iris / "iris_bounds.csv")
    assert rc == 0, err
    rec = record(iris, "m.csv")
    assert rec["inputs"]["n_components"] == "mle" and 1 <= rec["inputs"]["k"] <= 3
    assert out.startswith(f"analyze-gauss: {rec['inputs']['k']} component")
    rc, out, err = run("fit", iris / "iris.csv", "--method", "analyze-gauss", "-k", "2", "--epsilon", "inf", "--delta",
                       "1e-5", "--out", iris / "i.csv", "--force", "--bounds", iris / "iris_bounds.csv")
    assert rc == 0, err
    rec = record(iris, "i.csv")
    assert rec["contract"]["epsilon"] == "inf" and rec["guarantee"].startswith("not private")
    assert "NOT PRIVATE: --epsilon inf" in out.splitlines()[0] and "private variance" not in out.splitlines()[0]
    sentence = next(ln for ln in out.splitlines() if ln.startswith("Privacy: "))
    assert sentence.startswith("Privacy: NONE.") and "nothing in this output is private" in sentence
    assert sentence == rec["privacy"]["sentence"] and "a private mean" not in out and "PrivacyWarning" in err
    # the exact PCA of the same (clipped, centered) rows: its expected error is 0
    assert rec["released"]["expected_error"] == 0
    rc, out, err = run("fit", iris / "iris.csv", "--method", "analyze-gauss", "-k", "2", "--epsilon", "inf", "--delta",
                       "1e-5", "--out", iris / "i.csv", "--force", "--bounds", iris / "iris_bounds.csv", "--scale", "private")
    assert rc == 2 and "--epsilon inf is the non-private limit: use --scale none" in err
    for bad in ("-1", "0", "nan"):
        rc, _, err = run("fit", iris / "iris.csv", "--method", "analyze-gauss", "-k", "2", "--epsilon", bad, "--delta",
                         "1e-5", "--out", iris / "i.csv", "--force")
        assert rc == 2 and "--epsilon: expected" in err, (bad, err)


def test_degenerate_release_header(tmp_path):
    "A thresholded covariance that released zeros says that no component stands above the noise, not an order."
    from sklearn.datasets import load_diabetes
    np.savetxt(tmp_path / "d.csv", load_diabetes().data, delimiter=",", header=",".join(f"c{j}" for j in range(10)),
               comments="", fmt="%.17g")
    rc, out, err = run("fit", tmp_path / "d.csv", "--method", "dp-threshold-covariance", "-k", "2", "--epsilon", "1",
                       "--delta", "1e-6", "--seed", "0", "--out", tmp_path / "c.csv")
    assert rc == 0, err
    rec = record(tmp_path)
    assert rec["released"]["eigenvalues"] == [0.0, 0.0]                 # every entry fell below the threshold
    head = out.splitlines()[0]
    assert "no component stands above the noise" in head and "decreasing order" not in head
    assert "the released covariance is 0" in err                         # and the warning says why


def test_partly_degenerate_header():
    "Only the first m released variances above 0: the header names the rest as an arbitrary choice."
    from dppca_nb.cli import result_text
    rec = dict(method="dp-threshold-covariance", inputs=dict(k=2, p=3, n=10, columns=["a", "b", "c"]),
               components=dict(ordered=True), contract=dict(epsilon=1.0), random_level=1.15, location_invariant=False,
               released=dict(components=[[1, 0, 0], [0, 1, 0]], eigenvalues=[2.0, 0.0], expected_error=None),
               privacy=dict(sentence="Privacy: ..."))
    head = result_text(rec, "c.csv").splitlines()[0]
    assert "component 1 stands above the noise, and component 2 has released variance 0: an arbitrary choice" in head
    rec["released"]["eigenvalues"] = [2.0, 1.0]
    assert result_text(rec, "c.csv").splitlines()[0].endswith("(in decreasing order of private variance)")


def test_private_radius_line(iris):
    "A privately released radius is printed with its value; with --epsilon inf it is the exact quantile, said so."
    rc, out, err = fit(iris, "--radius", "private")
    assert rc == 0, err
    assert re.search(r"clipped to norm <= [\d.e+-]+, a bound released privately \(--radius private\)", out)
    rc, out, err = fit(iris, "--radius", "private", "--epsilon", "inf", out="ri.csv")
    assert rc == 0, err
    assert "a bound from the exact norms (--radius private)" in out
    assert "released privately" not in out and "NOT PRIVATE" in out.splitlines()[0]


def test_lazy_reads_the_same_fit(iris, tmp_path, monkeypatch):
    """--lazy reads DATA as a Dask array of byte ranges: the same components, to rounding, as the eager read; each
    block parsed once (spill=True), though the fit passes over the data several times."""
    import dppca_nb.data.tables as tables
    parses, parse = [], tables._read_block
    monkeypatch.setattr(tables, "_read_block", lambda *a: parses.append(a[5]) or parse(*a))
    data = iris / "iris.csv"
    outs = []
    for extra in ([], ["--lazy"]):
        out = tmp_path / f"c{len(extra)}.csv"
        rc, _, err = run("fit", data, "--method", "analyze-gauss", "--epsilon", 1, "--delta", 1e-5, "-k", 2,
                         "--seed", 0, "--out", out, *extra)
        assert rc == 0, err
        outs.append(np.loadtxt(out, delimiter=",", skiprows=1, usecols=range(1, 5)))
    np.testing.assert_allclose(outs[0], outs[1], atol=1e-9)       # only the order of the blocks' sums differs
    assert parses == [0]                                           # iris is one block: parsed once, then read back
    rc, _, err = run("fit", "-", "--method", "analyze-gauss", "-k", 2, "--epsilon", 1, "--delta", 1e-5, "--lazy")
    assert rc != 0 and "lazy" in err
