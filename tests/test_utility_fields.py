"""The UtilityWarning carries its reasons and their numbers as fields, and the command line reads the fields, never the
text: each reason's kind, words and numbers (the advised rows and epsilon), the text joined from the reasons, and a
scaled fit's whole --epsilon computed from the advised number."""
import ast
import io
import contextlib
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from dppca_nb import estimators as E
from dppca_nb.core.linalg import random_subspace_level

ROOT = Path(__file__).resolve().parents[1]


def caught_utility(f):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        f()
    return [w.message for w in got if isinstance(w.message, E.UtilityWarning)]


def test_reasons_carry_the_numbers_the_text_prints():
    "A fit at the random level: an `error` reason whose error, level, rows and epsilon are those printed."
    X = np.random.default_rng(0).normal(size=(60, 5)) * [3, 2, 1, 0.5, 0.2] / 10
    from dppca_nb.cli import estimator_for
    est = estimator_for("sgpca")(2, epsilon=0.3, delta=1e-5, random_state=0)
    [w] = caught_utility(lambda: est.fit(X))
    assert w.estimator == "Sgpca" and w.fields.keys() == {"estimator", "reasons"}
    assert str(w) == "Sgpca: " + "; ".join(r.text() for r in w.reasons) + ". " + E.PUBLISHABLE
    [r] = [r for r in w.reasons if r.kind == "error"]
    assert r.numbers["error"] == est.expected_error_ and r.numbers["level"] == random_subspace_level(5, 2)
    assert r.numbers["interval"] == est.expected_error_interval_
    assert f"its expected error {est.expected_error_:.3g}" in str(w)
    a = r.advice                         # the first-order rule: the error proportional to the noise, 'at least'
    assert a.budget and a.about == "at least" and a.n == 60 and a.rows > 60 and a.epsilon > 0.3
    target = 0.5 * E.UTILITY_LEVEL * r.numbers["level"]                # half the warning level
    assert a.rows == math.ceil(60 * r.numbers["error"] / target)
    assert a.epsilon == pytest.approx(0.3 * r.numbers["error"] / target, rel=1e-12)
    assert f"at least {a.rows} rows instead of 60, or epsilon at least {a.epsilon:.3g} would change that" in str(w)


def test_every_kind_of_reason_is_named():
    "The zero covariance and the unresolved components say so by kind, their numbers beside the words."
    X = np.random.default_rng(1).normal(size=(20, 4)) * 0.1
    ws = caught_utility(lambda: E.DPThresholdCovariance(epsilon=0.1, delta=1e-5, random_state=0).fit(X))
    by_kind = {r.kind: r for w in ws for r in w.reasons}
    assert set(by_kind) == {"zero_covariance", "clipping"}            # one warning each, by kind
    r = by_kind["zero_covariance"]
    assert r.kind == "zero_covariance" and not r.advice.budget and "radius=a number" in r.text()
    X = np.random.default_rng(0).normal(size=(200, 6)) * [1, 0.8, 0.2, 0.2, 0.2, 0.2]
    [w] = caught_utility(lambda: E.AnalyzeGaussPCA(2, epsilon=0.3, delta=1e-5, radius=3.0, random_state=0).fit(X))
    kinds = {r.kind: r for r in w.reasons}
    assert set(kinds) == {"error", "unresolved"}
    assert kinds["error"].advice.rows is None and "resolve no gap" in kinds["error"].text()   # no number to advise
    m = kinds["unresolved"].numbers["resolved"]
    assert m < 2 and f"only {m} of its 2 components stand above the noise" in str(w)


def test_scaled_fit_restates_the_advised_epsilon_from_the_number():
    """A scaled fit whose method warns: the whole --epsilon is the advised epsilon times the whole budget over the share,
    computed from the advice's number (the text shows it to 3 digits), and the reason's other words kept."""
    from dppca_nb.cli.assess import _whole_budget, _share_reasons
    a = E.Advice("at least", 172, 60, 0.28574)
    r = E.UtilityReason("error", "its expected error 1.55 is at or near the 1.55 of a random subspace", a, {"error": 1.55})
    w = _whole_budget(r, 3.0)
    assert w.numbers["epsilon"] == pytest.approx(0.85722)
    assert w.text() == ("its expected error 1.55 is at or near the 1.55 of a random subspace; at least 172 rows instead "
                        "of 60, or --epsilon at least 0.857 (the whole budget) would change that")
    eq = E.UtilityReason("equal_eigenvalues", "eigenvalues 2 and 3 are equal", E.Advice(words="more rows"))
    zero = E.UtilityReason("zero_covariance", "the released covariance is 0", E.Advice(words="a radius", budget=False))
    held = [E.UtilityWarning("x", estimator="X", reasons=(r, eq, zero))]
    # the method's own error is restated by the scaled fit; budget advice at the share left out; other advice kept
    assert [x.text() for x in _share_reasons(held)] == ["eigenvalues 2 and 3 are equal",
                                                         "the released covariance is 0; a radius would change that"]


def test_scaled_cli_warning_prints_the_fields():
    """`fit --scale private`'s path (fit_estimator, fit_release): the method's warning restated for the whole budget,
    its --epsilon the advised number times the whole over the share, as its field says."""
    from dppca_nb.cli import fit_estimator, fit_release
    X = np.random.default_rng(0).normal(size=(60, 5)) * [3, 2, 1, 0.5, 0.2]
    bounds = (np.full(5, -10.0), np.full(5, 10.0))
    held = []
    def fit():
        held.append(fit_estimator("sgpca", X, 2, 0.3, 1e-5, random_state=0, scale="private", bounds=bounds))
        fit_release(held[0], "sgpca")
    ws = caught_utility(fit)
    pipe = held[0]
    [own] = pipe.method_warnings_                          # the method's, at its share of the budget
    [w] = [w for w in ws if w.estimator == "Sgpca"]
    [r], [r0] = w.reasons, own.reasons
    ratio = pipe.contract_.epsilon / pipe[-1].epsilon
    assert r.numbers["epsilon"] == pytest.approx(r0.advice.epsilon * ratio, rel=1e-12)
    assert f"--epsilon at least {r.numbers['epsilon']:.3g} (the whole budget)" in str(w)
    assert str(w).split("; ")[0] == str(own).split("; ")[0]          # the reason's own words kept


def _cli_sources():
    return {p.name: p.read_text() for p in sorted((ROOT / "dppca_nb" / "cli").glob("*.py"))}


def test_the_cli_parses_no_warning_text():
    """No module of the command line matches the estimators' warning text: the regexes that did (`_ITS_ERROR`,
    `_whole_epsilon`) and the split of a warning at ': ' and '; ' are gone, and the modules that read the method's
    UtilityWarnings (`method_warnings_`, `.reasons`) import no `re`. (`report._as_flags` still writes the parameter
    names every published warning mentions as flags, with a regex over the text: a rewording, not a reading.)"""
    src = _cli_sources()
    assert src, "no dppca_nb/cli/ package"
    for name, s in src.items():
        assert "_ITS_ERROR" not in s and "_whole_epsilon" not in s, name
        assert '.partition(": ")' not in s and '.split("; ")' not in s, name
        if "method_warnings_" in s or ".reasons" in s:
            tree = ast.parse(s)
            imported = {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                        for a in n.names} | {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
            assert "re" not in imported, f"{name} reads UtilityWarnings and imports re"
    assert any(".reasons" in s for s in src.values())       # the fields are what the command reads
