"""What leaves the package says no more than it may and no less than is true: exact scores warn, a pickled estimator
holds no curator-only value, paper mode shows the epsilon it certifies, a contract with floating-point continuous
noise says so, and the command line publishes only the warnings of its allow-list (a record of 1e200 and an ordinary
neighbour publish the same record). Every table of methods is read from the registry.
"""
import copy
import json
import pickle
import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from dppca_nb.algorithms.registry import algorithms
from dppca_nb.estimators import ESTIMATORS, CURATOR_ONLY, ExactScoreWarning, _releases_variances, _DPCovariance
from dppca_nb.core.validation import PrivacyWarning
from dppca_nb.privacy.accounting import PrivacyAccountant
from dppca_nb.privacy.contract import _over

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")     # the fits' UtilityWarnings: not under test here

X = np.random.default_rng(0).normal(size=(300, 4)) / 4


def _fit(name, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ESTIMATORS[name](random_state=0, **kw).fit(X)


SCORED = sorted(n for n, c in ESTIMATORS.items() if issubclass(c, _DPCovariance) or _releases_variances(c()))


@pytest.mark.parametrize("name", SCORED)
def test_exact_scores_warn(name):
    "Every estimator with a model to score rows with (a covariance, or released variances) warns on each exact score."
    est = _fit(name)
    calls = [m for m in ("score", "score_samples", "mahalanobis") if hasattr(est, m)]
    assert calls, name
    for m in calls:
        with pytest.warns(ExactScoreWarning, match="NOT private"): getattr(est, m)(X[:20])
    assert issubclass(ExactScoreWarning, PrivacyWarning)             # shown by default


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_a_pickle_holds_no_curator_only_value(name):
    acc = PrivacyAccountant(None, 1e-5)
    est = _fit(name, accountant=acc)
    assert "diagnostics_not_private_" in vars(est)
    with pytest.warns(PrivacyWarning, match="shared accountant"): blob = pickle.dumps(est)
    back = pickle.loads(blob)
    assert set(vars(est)) - set(vars(back)) == set(CURATOR_ONLY) == {"diagnostics_not_private_"}
    assert re.search(rb"(?<![A-Za-z_])n_clipped", blob) is None     # the exact count (mean_clipped_share_ is released)
    for a in ("components_", "covariance_", "mean_"):
        if hasattr(est, a): np.testing.assert_array_equal(getattr(back, a), getattr(est, a))
    assert back.privacy_ == est.privacy_ and back.contract_ == est.contract_
    # the curator's own copy keeps everything and spends where the original does; a clone refits on the same ledger
    twin = copy.deepcopy(est)
    assert twin.diagnostics_not_private_ == est.diagnostics_not_private_ and twin.accountant is acc and twin.accountant_ is acc
    n = len(acc.ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        twin.fit(X); clone(est).fit(X)
    assert len(acc.ledger) == 3 * n


def test_a_copied_scaler_or_pipeline_spends_on_the_same_ledger():
    "copy.deepcopy of the private scaler (alone or in a PrivatePipeline) shares its accountant: the copy's fit is counted."
    from dppca_nb.preprocessing import PrivatePipeline, PrivateStandardScaler
    acc = PrivacyAccountant(None, 1e-5)
    sc = PrivateStandardScaler(accountant=acc, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                             # no pickling warning: a deepcopy is no pickle
        twin = copy.deepcopy(sc)
    assert twin.accountant is acc
    twin.fit(X)
    assert len(acc.ledger) == 2
    pl = PrivatePipeline([("s", PrivateStandardScaler(accountant=acc, random_state=0)),
                          ("p", ESTIMATORS["AnalyzeGaussPCA"](n_components=1, accountant=acc, random_state=0))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pl.fit(X)
        n = len(acc.ledger)
        copy.deepcopy(pl).fit(X)
    assert len(acc.ledger) == 2 * n - 2 and n > 2


PAPER = sorted(a.estimator for a in algorithms().values() if a.estimator and "sensitivity_rule" in a.options)


def test_paper_mode_shows_what_it_certifies():
    over = []
    for name in PAPER:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = ESTIMATORS[name](sensitivity_rule="paper", random_state=0).fit(X)
        c, pv = est.contract_, est.privacy_
        assert any(w.category is PrivacyWarning for w in caught) == _over(c), name   # warned where it certifies more
        if _over(c):
            over.append(name)
            assert pv["epsilon"] == c.epsilon_certified > 1.0 and pv["epsilon_requested"] == 1.0, name
            assert pv["epsilon_spent"] == pytest.approx(pv["epsilon"], rel=1e-9), name
        else: assert pv["epsilon"] == 1.0 and "epsilon_requested" not in pv, name
        assert "epsilon_requested" not in _fit(name).privacy_
    assert len(over) >= 2, over


def _continuous(c) -> bool:
    return c.noise in ("gaussian", "cauchy") or any(_continuous(b) for _, b in c.parts)


def test_floating_point_noise_is_said():
    said = []
    for key, alg in algorithms().items():
        for options in ({}, {"noise": "discrete_gaussian"}) if "noise" in alg.options else ({},):
            c = alg.plan(500, 4, 2, 1.0, 0.0 if alg.measure == "pure" else 1e-5, **{**alg.quick, **options}).contract
            assert ("is drawn in floating point" in c.statement()) == _continuous(c), (key, options, c.statement())
            assert ("noise='discrete_gaussian'" in c.statement()) == (c.noise == "gaussian"), (key, options)
            said.append(_continuous(c))
    assert any(said) and not all(said)                     # both kinds among the registered releases


def _cli(tmp_path, name, rows, method):
    from dppca_nb.cli import main
    import contextlib, io
    (tmp_path / name).mkdir()
    data, out = tmp_path / name / "data.csv", tmp_path / name / "out.csv"    # the same names: comparable records
    np.savetxt(data, rows, delimiter=",", header="a,b,c,d", comments="")
    delta = [] if algorithms()[method].measure == "pure" else ["--delta", "1e-5"]
    radius = ["--radius", "private"] if "radius" in algorithms()[method].options else []
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(["fit", str(data), "--method", method.replace("_", "-"), "-k", "1", "--epsilon", "1", *delta, *radius,
                   "--seed", "0", "--out", str(out), "--force"])
    assert rc == 0, err.getvalue()
    return json.loads(out.with_suffix(".csv.json").read_text()), err.getvalue()


CLI_METHODS = sorted(k for k, a in algorithms().items() if a.model == "central" and "radius" in a.options)


def test_cli_publishes_the_same_warnings_on_neighbours(tmp_path):
    "A record of norm 1e200 against an ordinary neighbour, every central method with a radius: the same public record."
    huge = X.copy()
    huge[0] = [1e200, 0, 0, 0]
    drop = lambda r: {k: v for k, v in r.items() if k not in ("released", "inputs")} | {
        "inputs": {k: v for k, v in r["inputs"].items() if k != "columns"}}
    public = lambda e: [l for l in e.splitlines() if l.startswith("dppca fit: warning:") and "UtilityWarning" not in l]
    for method in CLI_METHODS:
        (ra, ea), (rb, eb) = _cli(tmp_path, f"{method}_a", X, method), _cli(tmp_path, f"{method}_b", huge, method)
        assert drop(ra) == drop(rb), method
        assert public(ea) == public(eb) and not any("RuntimeWarning" in l for l in ea.splitlines() + eb.splitlines()), method


def test_collect_warnings_is_an_allow_list():
    from dppca_nb.cli import collect_warnings, get_method
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(over="warn"): np.square(np.array([1e200]))
        warnings.warn("a library's", FutureWarning)
        warnings.warn("a setting", PrivacyWarning)
    assert collect_warnings(caught, get_method("analyze-gauss")) == (["PrivacyWarning: a setting"], [])
