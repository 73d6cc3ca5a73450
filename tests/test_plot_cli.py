"""`dppca plot` as a user runs it: the private scree and score plot of a private PCA, each a PNG with its public
record beside it, the directions and the pictures on one ledger whose guarantee is printed; `--group` takes a text
column as each record's group. Each run goes through `dppca_nb.cli.main` in this process, on a small generated table."""
import csv
import json
import unittest.mock
import warnings

import numpy as np
import pytest


GROUPS = ("north", "south", "west")


from _cli_run import run  # noqa: E402 (the shared in-process runner)


def write_table(path, X, labels):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([f"f{j}" for j in range(X.shape[1])] + ["region"])
        for row, g in zip(X, labels): w.writerow([repr(float(v)) for v in row] + [g])
    return path


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    "1500 records of 5 columns (variances 4, 1, 0.25, ...) and a text column `region`, the groups apart along f0."
    d = tmp_path_factory.mktemp("plot")
    rng = np.random.default_rng(0)
    labels = np.array(GROUPS)[rng.integers(0, 3, 1500)]
    X = rng.normal(size=(1500, 5)) * [0.4, 0.2, 0.1, 0.05, 0.05]
    X[:, 0] += np.select([labels == "north", labels == "south"], [0.3, -0.3], 0.0)
    return write_table(d / "t.csv", X, labels), X, labels


def plot(table, folder, *extra, seed="1", group=True, epsilon="4"):
    args = ["plot", table, "--method", "analyze-gauss", "-k", "3", "--epsilon", epsilon, "--delta", "1e-5", "--bins", "6",
            "--scree", folder / "scree.png", "--scores", folder / "scores.png", "--seed", seed, *extra]
    return run(*args, *(["--group", "region"] if group else []))


def test_pngs_and_records_written_released_apart_from_public(table, tmp_path):
    rc, out, err = plot(table[0], tmp_path)
    assert rc == 0, err
    for name in ("scree", "scores"):
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        rec = json.loads((tmp_path / f"{name}.json").read_text())
        assert set(rec) == {"public", "released"}
        assert not set(rec["public"]) & set(rec["released"])
        assert {"settings", "contract", "ledger", "whole", "guarantee", "columns"} <= set(rec["public"])
        assert rec["public"]["contract"]["neighbouring"] == "replace-one"
    scree = json.loads((tmp_path / "scree.json").read_text())
    assert {"scree", "pve", "interval", "pve_interval"} <= set(scree["released"])
    pve = np.asarray(scree["released"]["pve"])
    assert pve.shape == (3,) and abs(pve.sum() - 1) < 1e-9 and np.all(np.diff(pve) <= 1e-12)   # decreasing shares
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert {"counts", "proportions", "frame", "edges_x", "edges_y"} <= set(scores["released"])
    assert "counts" not in json.dumps(scores["public"]["settings"])


def test_the_guarantee_of_the_whole_is_printed_and_is_the_ledgers(table, tmp_path):
    rc, out, err = plot(table[0], tmp_path)
    assert rc == 0, err
    line = next(ln for ln in out.splitlines() if ln.startswith("Guarantee: ("))
    whole = json.loads((tmp_path / "scores.json").read_text())["public"]["whole"]
    assert line == json.loads((tmp_path / "scree.json").read_text())["public"]["guarantee"]
    assert f"({whole['epsilon']:.4g}, 1e-05)-DP as a whole" in line and "the scree and the score plot" in line
    assert 0 < whole["epsilon"] <= 4 + 1e-9
    owners = [e["label"].split(".")[0] for e in whole["ledger"]]
    assert owners[0] == "AnalyzeGaussPCA" and owners[-5:] == ["scree"] * 3 + ["scores"] * 2   # one ledger, directions first
    # the pictures' half, split evenly: each picture's parts sum to epsilon 1 by basic composition
    for who in ("scree", "scores"): assert abs(sum(e["epsilon"] for e in whole["ledger"] if e["label"].startswith(who)) - 1) < 1e-9


def test_group_column_gives_one_histogram_per_public_group(table, tmp_path):
    rc, out, err = plot(table[0], tmp_path, "--groups", "west,north,south,east", epsilon="40")
    assert rc == 0, err
    rec = json.loads((tmp_path / "scores.json").read_text())
    assert rec["public"]["group_column"] == "region" and rec["public"]["groups_from"] == "--groups"
    assert rec["public"]["settings"]["groups"] == ["west", "north", "south", "east"]
    assert rec["public"]["columns"] == [f"f{j}" for j in range(5)]           # the group is no feature
    counts = np.asarray(rec["released"]["counts"])
    assert counts.shape == (4, 6, 6)
    # a released count is max(count + N(0, s^2), 0): its error lies in [N, max(N, 0)], so a group's 36 cells err by at
    # least -5 sd of their summed noise (6 s) and at most E sum max(N, 0) = 36 s / sqrt(2 pi) plus 5 of its sd (< 6 s)
    s = rec["public"]["contract"]["parts"]["histogram"]["noise_scale"]
    lo, hi = -30 * s, 36 * s / np.sqrt(2 * np.pi) + 30 * s
    totals = counts.reshape(4, -1).sum(axis=1)
    labels = table[2]
    for g, total in zip(("west", "north", "south"), totals[:3]): assert lo <= total - (labels == g).sum() <= hi, (g, total, s)
    assert 0 <= totals[3] <= hi < 0.25 * min((labels == g).sum() for g in GROUPS)   # "east": no record, only noise
    assert "by region: west, north, south, east" in out


def test_distinct_values_as_groups_and_too_many(table, tmp_path):
    rc, out, err = plot(table[0], tmp_path)
    rec = json.loads((tmp_path / "scores.json").read_text())
    assert rc == 0 and rec["public"]["settings"]["groups"] == sorted(GROUPS), err
    X = np.random.default_rng(1).normal(size=(300, 3))
    many = write_table(tmp_path / "many.csv", X, [f"g{i % 25}" for i in range(300)])
    rc, _, err = plot(many, tmp_path, "--force")
    assert rc == 2 and "--group: the column has 25 distinct values, more than 20" in err, err


def test_bad_group_names_the_flag_and_writes_nothing(table, tmp_path):
    for extra, words in ((["--group", "regio"], "--group: no column 'regio'"), (["--group", "9"], "--group: column 9 is out of range"),
                         (["--groups", "a,b"], "--groups: only with --group COLUMN"),
                         (["--group", "region", "--groups", "a,,b"], "--groups: expected a comma-separated list")):
        rc, out, err = run("plot", table[0], "--method", "analyze-gauss", "--epsilon", "1", "--delta", "1e-5",
                           "--scores", tmp_path / "s.png", *extra)
        assert rc == 2 and words in err and "Traceback" not in err, (extra, err)
        assert not list(tmp_path.iterdir()), "a refused run wrote something"


def test_same_seed_same_record_other_seed_other_values(table, tmp_path):
    a, b, c = (tmp_path / x for x in "abc")
    for d in (a, b, c): d.mkdir()
    for d, seed in ((a, "5"), (b, "5"), (c, "6")): assert plot(table[0], d, seed=seed)[0] == 0
    for name in ("scree.json", "scores.json"):
        assert (a / name).read_text() == (b / name).read_text()
        ra, rc_ = (json.loads((d / name).read_text()) for d in (a, c))
        assert ra["public"] == rc_["public"] and ra["released"] != rc_["released"]   # the seed moves only the noise


def test_neighbouring_tables_publish_the_same_public_record(table, tmp_path):
    "One record replaced by a far one (and its group changed): the same seed gives the same public parts."
    _, X, labels = table
    X2, l2 = X.copy(), labels.copy()
    X2[3], l2[3] = [50.0, -40.0, 30.0, 20.0, 10.0], ("north" if labels[3] != "north" else "south")
    other = write_table(tmp_path / "n.csv", X2, l2)
    (tmp_path / "a").mkdir(); (tmp_path / "b").mkdir()
    ra = plot(table[0], tmp_path / "a"); rb = plot(other, tmp_path / "b")
    assert ra[0] == rb[0] == 0
    for name in ("scree.json", "scores.json"):
        pa, pb = (json.loads((tmp_path / d / name).read_text())["public"] for d in "ab")
        assert pa == pb
    assert ra[1].splitlines()[-1] == rb[1].splitlines()[-1]          # the guarantee line


def test_refusals_before_any_private_work(table, tmp_path):
    base = ("plot", table[0], "--epsilon", "1")
    cases = [(["--method", "analyze-gauss", "--delta", "1e-5"], "--scree, --scores: give at least one picture"),
             (["--method", "analyze-gauss", "--scree", tmp_path / "s.png"], "--delta: the pictures add Gaussian noise"),
             (["--method", "analyze-gauss", "--delta", "1e-5", "-k", "1", "--scores", tmp_path / "s.png"], "-k: the score plot needs -k 2"),
             (["--method", "analyze-gauss", "--delta", "1e-5", "--scree", tmp_path / "s.svg"], "--scree: expected a file name ending in .png"),
             (["--method", "dp-threshold-covariance", "--delta", "1e-5", "--scree", tmp_path / "s.png"], "releases no components"),
             (["--method", "analyze-gauss", "--delta", "1e-5", "--scree", tmp_path / "s.png", "--picture-share", "1"], "--picture-share")]
    for extra, words in cases:
        rc, _, err = run(*base, *extra, *(["--group", "region"]))
        assert rc == 2 and words in err, (extra, err)
    assert not list(tmp_path.iterdir())
    (tmp_path / "s.png").write_bytes(b"x")
    rc, _, err = run(*base, "--method", "analyze-gauss", "--delta", "1e-5", "--scree", tmp_path / "s.png", "--group", "region")
    assert rc == 2 and "--scree: " in err and "exists; add --force" in err, err


def test_without_matplotlib_the_command_names_the_extra(table, tmp_path):
    real = __import__("importlib.util").util.find_spec
    with unittest.mock.patch("importlib.util.find_spec", lambda m, *a: None if m == "matplotlib" else real(m, *a)):
        rc, _, err = plot(table[0], tmp_path)
    assert rc == 2, err
    assert "dppca plot needs the [experiments] extra: pip install 'dppca_nb[experiments]'" in err
    assert "not installed here: matplotlib" in err and not list(tmp_path.iterdir())


def test_a_released_scree_spends_nothing_and_leaves_the_budget_to_the_rest(table, tmp_path):
    rc, out, err = run("plot", table[0], "--method", "analyze-gauss", "-k", "3", "--epsilon", "2", "--delta", "1e-5",
                       "--scree", tmp_path / "r.png", "--scree-method", "released", "--seed", "0", "--drop", "region")
    assert rc == 0, err
    rec = json.loads((tmp_path / "r.json").read_text())
    assert rec["public"]["statement"].startswith("post-processing") and set(rec["released"]) == {"scree", "pve", "order"}
    whole = rec["public"]["whole"]
    assert all(e["label"].startswith("AnalyzeGaussPCA") for e in whole["ledger"])     # only the directions spent
    assert abs(whole["epsilon"] - 2) < 1e-6                                             # and they had all of it
    pve = np.asarray(rec["released"]["pve"])
    assert pve.shape == (3,) and abs(pve.sum() - 1) < 1e-9


def test_columns_and_drop_choose_the_features_beside_the_group(table, tmp_path):
    for extra, cols in ((["--drop", "f4"], ["f0", "f1", "f2", "f3"]), (["--columns", "f0,f1,f2"], ["f0", "f1", "f2"])):
        rc, _, err = plot(table[0], tmp_path, "--force", *extra)
        assert rc == 0, err
        assert json.loads((tmp_path / "scores.json").read_text())["public"]["columns"] == cols


def test_advice_is_for_the_whole_epsilon(tmp_path):
    """The fit's UtilityWarning advises an epsilon for the directions' share (half of --epsilon here): `plot` prints it
    as the whole --epsilon, the field's number times the whole over the share, and the rows unchanged."""
    from dppca_nb import estimators as E
    from dppca_nb.cli.plot import _whole_plot_budget
    adv = E.Advice("about", 900, 300, 1.52)
    m = E.UtilityWarning("AnalyzeGaussPCA: x", estimator="AnalyzeGaussPCA",
                         reasons=(E.UtilityReason("error", "its expected error 1.9 is at or near the 2.7", adv),))
    w = warnings.WarningMessage(m, E.UtilityWarning, "f.py", 1)
    [out] = _whole_plot_budget([w], 2.0)
    [r] = out.message.reasons
    assert r.numbers["epsilon"] == pytest.approx(3.04)
    assert str(out.message) == ("AnalyzeGaussPCA: its expected error 1.9 is at or near the 2.7; about 900 rows instead of "
                                "300, or --epsilon about 3.04 (the whole budget) would change that. " + E.PUBLISHABLE)
    from dppca_nb.data.r_dppca import load_r_dppca                   # bundled: the R package's table, 5 groups
    X, g = load_r_dppca("gau_g", return_groups=True)
    data = write_table(tmp_path / "gau.csv", X, g)
    rc, out, err = run("plot", data, "--method", "analyze-gauss", "-k", "5", "--epsilon", "3", "--delta", "1e-4",
                       "--scores", tmp_path / "s.png", "--group", "region", "--seed", "0")
    assert rc == 0, err
    assert "rows instead of 5000, or --epsilon about " in err and "(the whole budget)" in err, err
    assert ", or epsilon about" not in err, err           # not the directions' share
