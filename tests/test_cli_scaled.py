"""`dppca fit --scale private` with its private clipping check (`cli.clipping_check`): the budget split (the scaler and
the method at 0.9 of --epsilon, the check at 0.1) and its total, the check as the contract's third part, its released
fields (present, and the record's public part the same on neighbouring tables), the covtype sample where the clipping's
bias dominates (the warning, the expected error, the interval), the JSON output, and --scale none untouched.

Runs go through `dppca_nb.cli.main` in this process on small tables written to CSV (the bundled covtype sample's first
3000 rows, scikit-learn's iris, a Gaussian table); no download.
"""
import json
import math
import warnings

import numpy as np
import pytest

from dppca_nb.algorithms.registry import algorithms
from dppca_nb.cli import fit_estimator, fit_options, norm_bounds, get_method, assess_fit, method_name
from dppca_nb.core.linalg import subspace_distance, top_k_eigvecs
from dppca_nb.preprocessing import CLIP_CHECK_SHARE, pipeline_ledger

# the covtype columns' documented ranges (UCI covtype.info; 44 binary columns): public bounds, as benchmarks/defaults.py
COVTYPE_BOUNDS = (np.r_[1859, 0, 0, 0, -173, 0, 0, 0, 0, 0, np.zeros(44)],
                  np.r_[3858, 360, 66, 1397, 601, 7117, 255, 255, 255, 7173, np.ones(44)])


from _cli_run import run  # noqa: E402 (the shared in-process runner)


def _csv(path, X):
    np.savetxt(path, X, delimiter=",", header=",".join(f"c{j}" for j in range(X.shape[1])), comments="", fmt="%.17g")
    return path


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    "iris.csv, its documented bounds, a Gaussian table and its neighbour (one row far outside), in a fresh folder."
    from sklearn.datasets import load_iris
    d = tmp_path_factory.mktemp("scaled")
    _csv(d / "iris.csv", load_iris().data)
    _csv(d / "iris_bounds.csv", np.array([[4.3, 2.0, 1.0, 0.1], [7.9, 4.4, 6.9, 2.5]]))
    X = np.random.default_rng(2).normal(size=(2000, 4)) * [0.6, 0.3, 0.1, 0.05]
    Y = X.copy(); Y[7] = [30.0, -20.0, 10.0, 5.0]
    _csv(d / "nb_a.csv", X); _csv(d / "nb_b.csv", Y)
    return d


def fit(data, *extra, method="analyze-gauss", eps="1", out=None):
    args = ["fit", data, "--method", method, "-k", "2", "--epsilon", eps, "--delta", "1e-6", "--seed", "5",
            "--scale", "private", *extra]
    if out is not None: args += ["--out", out, "--force"]
    return run(*args)


@pytest.mark.parametrize("eps", [3.0, 10.0])
def test_budget_split_and_total(tables, eps):
    "Three parts listed; the check gets 0.1 of epsilon, pure; the scaler and the method the rest; the total <= epsilon."
    rc, out, err = fit(tables / "iris.csv", "--bounds", tables / "iris_bounds.csv", eps=repr(eps), out=tables / "s.csv")
    assert rc == 0, err
    rec = json.loads((tables / "s.csv.json").read_text())
    parts = rec["contract"]["parts"]
    assert list(parts) == ["scaler", "pca", "clipping_turn"], list(parts)
    c = parts["clipping_turn"]
    assert c["measure"] == "pure" and c["delta"] == 0 and c["noise"] == "laplace" and c["calibration"] == "snapping"
    # the check's epsilon is 0.1 x epsilon, lowered by at most a few ulps so that the rounded sum stays within epsilon
    assert CLIP_CHECK_SHARE * eps * (1 - 1e-14) <= c["epsilon"] <= CLIP_CHECK_SHARE * eps
    assert eps - 1e-3 <= rec["contract"]["epsilon"] <= eps, rec["contract"]["epsilon"]
    # the scaler and the method compose (exactly, both Gaussian) within the 0.9 left: the total is the basic sum
    assert rec["contract"]["epsilon"] <= c["epsilon"] + 0.9 * eps * (1 + 1e-12)
    shares = {p["part"]: p["share"] for p in rec["privacy"]["parts"]}
    assert abs(sum(shares.values()) - 1) < 1e-9 and abs(shares["clipping_turn"] - 0.1) < 1e-3, shares
    assert "the clipping check (10%)" in out and rec["inputs"]["clip_check_share"] == CLIP_CHECK_SHARE


def test_no_turn_defined_no_check_and_said(tables):
    """iris at epsilon 1 (seed 5): the second released variance is the rest's (no turn is defined), so no check is
    released: two parts, 0.9 of epsilon spent, and the note says the share is unspent."""
    rc, out, err = fit(tables / "iris.csv", "--bounds", tables / "iris_bounds.csv", "--format", "json", out=tables / "u.csv")
    assert rc == 0, err
    rec = json.loads(out)
    assert list(rec["contract"]["parts"]) == ["scaler", "pca"] and "clipping_turn" not in rec["released"]
    assert 0.9 - 1e-3 <= rec["contract"]["epsilon"] <= 0.9
    assert "its share 0.1 of epsilon is unspent" in rec["released"]["expected_error_note"]


def test_pipeline_ledger_total_within_epsilon():
    "The fitted pipeline's own ledger, the check's stated part added, totals at most epsilon; the accountant saw the check."
    X = np.random.default_rng(0).normal(size=(3000, 3)) * [3.0, 1.0, 0.3] + 10.0
    B = (np.zeros(3), np.full(3, 20.0))
    opts = {}; norm_bounds(get_method("analyze-gauss"), opts, 3, bounds=B, scale="private")
    pipe = fit_estimator("analyze-gauss", X, 1, 0.7, 1e-5, scale="private", bounds=B, random_state=0, **opts)
    stated = dict(pipe.contract_.parts)["clipping_turn"]
    led = pipeline_ledger(pipe, extra={"clipping_turn": stated})
    assert led.spent() <= 0.7 and abs(led.spent() - pipe.contract_.epsilon) < 1e-12
    assert "release_clipping_turn" in pipe[-1].accountant_.summary()          # spent on the method's ledger
    # the stated part carries no data-dependent number; the check's own contract (the accountant's) does
    assert stated.noise_scale is None and stated.sensitivity is None and pipe.clipping_turn_.contract.noise_scale > 0
    # without the check: two parts, the whole epsilon to the scaler and the method
    pipe0 = fit_estimator("analyze-gauss", X, 1, 0.7, 1e-5, scale="private", bounds=B, random_state=0, clip_check=False, **opts)
    assert [a for a, _ in pipe0.contract_.parts] == ["scaler", "pca"] and 0.7 - 1e-4 < pipe0.contract_.epsilon <= 0.7


CLIPPING = [method_name(a) for a in algorithms().values()                  # central subspace methods with a norm bound
            if a.model == "central" and a.output == "subspace" and "radius" in fit_options(a).values()]


@pytest.mark.parametrize("method", CLIPPING)
def test_neighbours_publish_the_same_record(tables, method):
    """The record less the released values is the same on a table and its neighbour (one row replaced by one far outside
    the bounds), the released keys too; the check's fields are released values, its scale among them (Analyze Gauss
    releases the check on this table; a method whose released variances define no turn releases none, on both)."""
    recs = []
    for data in ("nb_a.csv", "nb_b.csv"):
        rc, out, err = fit(tables / data, "--bounds=-2:2", method=method, out=tables / f"n_{method}.csv")
        assert rc == 0, err
        recs.append(json.loads((tables / f"n_{method}.csv.json").read_text()))
    a, b = recs
    assert {x: y for x, y in a.items() if x != "released"} == {x: y for x, y in b.items() if x != "released"}
    assert set(a["released"]) == set(b["released"])
    if method == "analyze-gauss": assert "clipping_turn" in a["contract"]["parts"]
    for r in (recs if "clipping_turn" in a["contract"]["parts"] else []):
        assert {"clipping_turn", "clipping_bias", "clipping_turn_scale", "clipping_turn_sensitivity"} <= set(r["released"])
        assert r["contract"]["parts"]["clipping_turn"]["noise_scale"] is None
        # the released t lies on the snapping grid; the bias is its post-processing, within [0, the random level]
        t, g = r["released"]["clipping_turn"], r["released"]["clipping_turn_grid"]
        assert abs(t / g - round(t / g)) < 1e-9 and 0 <= r["released"]["clipping_bias"] <= r["random_level"]


def _covtype(n=3000):
    from dppca_nb.data.datasets import load_bundled
    return load_bundled("covtype_sample", standardize=False, normalize=False)[:n]


def _scaled_fit(X, check, radius=None, eps=10.0, k=2):
    opts = {} if radius is None else {"radius": radius}
    norm_bounds(get_method("analyze-gauss"), opts, X.shape[1], bounds=COVTYPE_BOUNDS, scale="private")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe = fit_estimator("analyze-gauss", X, k, eps, 1e-5, random_state=0, scale="private", bounds=COVTYPE_BOUNDS,
                             clip_check=check, **opts)
        e, iv, note = assess_fit(pipe, k)
    reasons = [r for w in caught if hasattr(w.message, "reasons") for r in w.message.reasons]
    return pipe, e, iv, note, reasons


def test_covtype_clipping_dominates():
    """The covtype sample at epsilon 10 (its 54 standardized columns clipped to sqrt(54): about a fifth of the rows): the
    clipping's bias, not the noise, dominates the measured error. With the check the expected error holds it within 2x
    and a `clipping_turn` reason says so; without it the printed error is several times too small (as
    benchmarks/scaled_clipping.md measured on the whole sample)."""
    from sklearn.preprocessing import StandardScaler
    X = _covtype()
    Vt = top_k_eigvecs(np.cov(StandardScaler().fit_transform(X), rowvar=False, bias=True), 2)
    p0, e0, iv0, _, why0 = _scaled_fit(X, False)
    p1, e1, iv1, note, why1 = _scaled_fit(X, True)
    m0, m1 = (subspace_distance(p.steps[-1][1].components_.T, Vt) for p in (p0, p1))
    assert e0 < 0.5 * m0, (e0, m0)                                     # the noise alone: far below the measured
    assert 0.5 <= e1 / m1 <= 2, (e1, m1)
    turn = p1.clipping_turn_
    assert 0 < turn.bias <= e1 and e1 - turn.bias < turn.bias, (e0, e1, turn)      # the noise's part: the smaller
    [r] = [r for r in why1 if r.kind == "clipping_turn"]
    assert r.numbers["bias"] == turn.bias and r.numbers["bias"] > r.numbers["noise"] and r.numbers["error"] == e1
    assert not [r for r in why0 if r.kind == "clipping_turn"] and "clipping's bias" in note
    assert iv1[0] <= m1 <= iv1[1] and iv1[1] >= iv0[1]


def test_covtype_interval_widens_by_the_bias_upper_end():
    """At --radius 1.5 sqrt(p) fewer than 5% of the rows are clipped (the interval is not already widened to the random
    level by the released clipped share): the check raises the interval's upper end by the bias's upper end."""
    X = _covtype()
    R = 1.5 * math.sqrt(X.shape[1])
    p0, e0, iv0, _, _ = _scaled_fit(X, False, radius=R)
    p1, e1, iv1, _, _ = _scaled_fit(X, True, radius=R)
    level = 2 * 2 ** 0.5 * math.sqrt(1 - 2 / 54)                       # sqrt(2 k (1 - k / p)), k = 2, p = 54
    assert p1.steps[-1][1].clipped_share_ < 0.05 and iv0[1] < level
    hi = p1.clipping_turn_.bias_high
    # the method's own interval moves with its 0.9 of the budget; the check adds its bias's upper end on top
    assert iv1[1] > iv0[1] + 0.5 * hi and e1 >= e0, (iv0, iv1, hi)


def test_json_output_is_machine_readable(tables):
    "--format json prints the record: it parses, and holds the check's released fields and its part of the guarantee."
    rc, out, err = fit(tables / "iris.csv", "--bounds", tables / "iris_bounds.csv", "--format", "json", eps="10", out=tables / "j.csv")
    assert rc == 0, err
    rec = json.loads(out)
    r = rec["released"]
    assert isinstance(r["clipping_turn"], float) and isinstance(r["clipping_bias"], float)
    assert math.isfinite(r["clipping_turn"]) and r["expected_error"] >= r["clipping_bias"]
    assert "clipping_turn" in rec["privacy"]["statement"] and any(p["part"] == "clipping_turn" for p in rec["privacy"]["parts"])


def test_scale_none_and_methods_without_a_bound_have_no_check(tables):
    "--scale none records no check; a method without a norm bound (g-dppca) under --scale private neither: two parts."
    rc, out, err = run("fit", tables / "iris.csv", "--method", "analyze-gauss", "-k", "2", "--epsilon", "1", "--delta",
                       "1e-6", "--seed", "5", "--format", "json", "--out", tables / "none.csv", "--force")
    assert rc == 0, err
    rec = json.loads(out)
    assert not [x for x in rec["released"] if x.startswith("clipping_turn")] and "clipping_turn" not in rec["contract"]["parts"]
    rc, out, err = fit(tables / "iris.csv", "--bounds", tables / "iris_bounds.csv", "--format", "json", method="g-dppca", out=tables / "g.csv")
    assert rc == 0, err
    rec = json.loads(out)
    assert list(rec["contract"]["parts"]) == ["scaler", "pca"] and "clipping_turn" not in rec["released"]
