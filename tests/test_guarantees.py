"""What the package states and sends must be what holds: the ledger spends what a contract certifies (paper mode),
nothing exact leaves a local-model partition on Dask, SGPCA's guarantee says it holds only on data of its model, a
pipeline refuses a step it cannot certify before a private one, and the clipping warning (and every committed
notebook output and the README) carries no count of clipped rows.

Each test here fails on a version of the package that has the defect: the accountant took two paper-mode fits at
epsilon 1 in a budget of 2 (their true total is 2.15); a pipeline stated the requested sum; the Dask partitions sent
their exact clipped counts to the client; SGPCA's contract read "(1, 1e-05)-DP"; `FunctionTransformer` passed; the
warning read "1198 of 10000 of the rows (12%)".
"""
import json
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from dppca_nb.estimators import AnalyzeGaussPCA, LocalGaussianPCA, ClippingWarning
from dppca_nb.preprocessing import PrivateStandardScaler, private_pipeline
from dppca_nb.privacy.accounting import PrivacyAccountant, BudgetExceededError, gaussian_rho
from dppca_nb.privacy.contract import Contract
from dppca_nb.algorithms.registry import algorithms
from dppca_nb.privacy.mechanisms import gaussian_epsilon, gaussian_sigma
from dppca_nb.core.validation import PrivacyWarning

ROOT = Path(__file__).resolve().parents[1]


def _paper_fit(X, accountant=None, seed=0, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)        # paper mode warns by design
        kw.setdefault("radius", 1.0)                             # the paper's unit ball (the rows lie inside it)
        kw.setdefault("count_share", 0.0)                        # one part: the test reads its noise scale
        return AnalyzeGaussPCA(2, epsilon=1.0, delta=1e-5, sensitivity_rule="paper", accountant=accountant,
                               random_state=seed, **kw).fit(X)


@pytest.fixture(scope="module")
def X():
    Z = np.random.default_rng(0).normal(size=(1000, 5))
    return Z / np.linalg.norm(Z, axis=1).max()                  # inside the unit ball: nothing clipped


# --- 1. paper mode in the ledger -----------------------------------------------------------------------------

def test_accountant_refuses_second_paper_fit(X):
    "Two paper fits at epsilon 1 are (2.15, 1e-5)-DP: a budget of (2, 1e-5) takes the first and refuses the second."
    acc = PrivacyAccountant(2.0, 1e-5)
    first = _paper_fit(X, acc, centering="none")
    c = first.contract_
    n = X.shape[0]
    true_rho = gaussian_rho(c.noise_scale, math.sqrt(2) / n)    # the noise against the true sensitivity sqrt 2 / n
    assert acc.ledger[0].rho == pytest.approx(true_rho, rel=1e-8)    # not the request's rho (half of it)
    assert acc.spent() == pytest.approx(c.epsilon_certified, rel=1e-8) and c.epsilon_certified > 1.4
    assert gaussian_epsilon(c.noise_scale / math.sqrt(2), 1e-5, math.sqrt(2) / n) > 2     # the pair's true epsilon
    with pytest.raises(BudgetExceededError, match="left"):
        _paper_fit(X, acc, seed=1, centering="none")
    assert len(acc.ledger) == 1                                  # the refused fit recorded nothing


def test_fit_ledger_and_statement_at_certified(X):
    "With private centering the fit's own ledger, privacy_ and contract_ all carry what is certified, above the request."
    est = _paper_fit(X)
    pv = est.privacy_
    assert pv["epsilon"] == pv["epsilon_certified"] > 1.2 and pv["epsilon_requested"] == 1.0   # shown: what is certified
    assert pv["epsilon_spent"] == pytest.approx(pv["epsilon_certified"], rel=1e-12)
    assert est.contract_.guarantee.startswith(f"({pv['epsilon_certified']:.4g}, 1e-05)-DP (certified")
    assert max(s.epsilon for s in est.accountant_.ledger) > est.contract_.part("main").epsilon   # the main, certified


def test_spend_contract_is_the_one_place():
    "spend_contract: an analytic Gaussian at its true sensitivity, anything else at max(epsilon, certified)."
    n = 500
    sig = gaussian_sigma(1.0, 1e-5, 1 / n)
    paper = Contract("g", 1.0, 1e-5, noise="gaussian", calibration="analytic", sensitivity=1 / n, noise_scale=sig,
                     epsilon_certified=gaussian_epsilon(sig, 1e-5, math.sqrt(2) / n))
    s = PrivacyAccountant().spend_contract(paper)
    assert s.rho == pytest.approx(gaussian_rho(sig, math.sqrt(2) / n), rel=1e-8)
    assert s.epsilon == pytest.approx(paper.epsilon_certified, rel=1e-8)
    assert PrivacyAccountant().spend_contract(Contract("c", 0.5, 1e-6, epsilon_certified=0.9)).epsilon == 0.9
    with pytest.raises(TypeError, match="contract"):
        PrivacyAccountant().spend_contract({"epsilon": 1.0})


def test_pipeline_states_what_its_steps_certify(X):
    """A scaler at 0.5 then a paper fit at 1: the pipeline states what its steps certify, composed on one ledger (the
    fit's certified epsilon, not its requested 1), the same number as that ledger."""
    from dppca_nb.preprocessing import pipeline_ledger
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning); warnings.simplefilter("ignore", ClippingWarning)
        pipe = private_pipeline(PrivateStandardScaler(epsilon=0.5, bounds=(-1.0, 1.0), random_state=0),
                                AnalyzeGaussPCA(2, epsilon=1.0, sensitivity_rule="paper", random_state=0)).fit(X)
    fit_cert = pipe[-1].contract_.epsilon_certified
    assert fit_cert > 1.2
    eps = pipe.privacy_["epsilon"]
    assert fit_cert < eps <= 0.5 + fit_cert + 1e-9                      # more than the fit certifies, at most the sum
    assert eps == pytest.approx(pipeline_ledger(pipe).spent(), rel=1e-12)
    assert pipe.privacy_["guarantee"].startswith(f"({eps:.4g}, 2e-05)-DP")
    assert pipe.contract_.guarantee == pipe.privacy_["guarantee"]
    assert pipe.privacy_["epsilon_certified"] == pytest.approx(eps, rel=1e-12)


# --- 2. the local model on Dask: what each partition sends --------------------------------------------------

def _flatten(msg, prefix=""):
    "A partition task's message as {field: value} (a LocalAggregator by its attributes, tuples by position)."
    if isinstance(msg, (tuple, list)):
        out = {}
        for i, m in enumerate(msg): out.update(_flatten(m, f"{prefix}{i}."))
        return out
    if hasattr(msg, "__dict__"):
        return {f"{prefix}{type(msg).__name__}.{k}": v for k, v in vars(msg).items()}
    return {prefix.rstrip("."): msg}


def _sent(monkeypatch, run, X, seed):
    "{(block, field): value} of every message a partition's task returned to the client during run(X, seed)."
    import dppca_nb.backends.blocks as blocks      # map_blocks builds its tasks from blocks._block_task
    real, out = blocks._block_task, {}
    def spy(func, x, args, s, finite=True):
        r = real(func, x, args, s, finite)
        key = (getattr(func, "__name__", "?"), None if s is None else tuple(s.spawn_key))
        for f, v in _flatten(r).items(): out[key + (f,)] = v
        return r
    monkeypatch.setattr(blocks, "_block_task", spy)
    try: run(X, seed)
    finally: monkeypatch.setattr(blocks, "_block_task", real)
    return out


def _same(a, b):
    try: return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except Exception: return a == b


def _exact_and_data_dependent(m_a, m_b, m_a2, m_b2):
    "Fields that differ between neighbours under the same seed but not between seeds on the same data: exact."
    assert set(m_a) == set(m_b), "the layout of the messages depends on the data"
    return sorted(k for k in m_a if not _same(m_a[k], m_b[k]) and _same(m_a[k], m_a2[k]) and _same(m_b[k], m_b2[k]))


@pytest.mark.parametrize("centering", ["none", "private"])
def test_dask_local_partitions_send_nothing_exact(monkeypatch, centering):
    "Neighbours with one record moved outside the ball (clipped on one only): only noisy sums differ, in any message."
    da = pytest.importorskip("dask.array")
    Xa = np.random.default_rng(1).normal(size=(1200, 4)) / 4
    Xa[3] = 0.1                                                   # inside the ball on D ...
    Xb = Xa.copy(); Xb[3] = [5.0, 0, 0, 0]                        # ... outside it on D'
    def run(X, seed):
        LocalGaussianPCA(2, centering=centering, random_state=seed).fit(da.from_array(X, chunks=(300, 4)))
    m = {(d, s): _sent(monkeypatch, run, Z, s) for d, Z in (("a", Xa), ("b", Xb)) for s in (7, 8)}
    assert m["a", 7], "no partition task ran"
    leaked = _exact_and_data_dependent(m["a", 7], m["b", 7], m["a", 8], m["b", 8])
    assert leaked == [], f"exact data-dependent values sent by a device partition: {leaked}"
    # every task's value is one object (a noisy sum: a LocalAggregator or a vector), never a tuple with a count in it
    fields = [f for (*_, f) in m["a", 7]]
    assert any(f.startswith("0.LocalAggregator.") for f in fields) and not any(re.match(r"0\.\d", f) for f in fields)
    est = LocalGaussianPCA(2, centering=centering, random_state=0).fit(da.from_array(Xb, chunks=(300, 4)))
    assert "n_clipped" not in est.diagnostics_not_private_       # no count left a partition, so none is reported


# --- 3. SGPCA's wording --------------------------------------------------------------------------------------

def test_sgpca_statement_says_model_only():
    REGISTRY = algorithms()
    c = REGISTRY["sgpca"].plan(200, 5, 2, 1.0, 1e-5).contract
    assert c.guarantee == "(1, 1e-05)-DP only on data of its model, NOT worst-case DP"    # was "(1, 1e-05)-DP"
    assert c.worst_case is False and REGISTRY["sgpca"].worst_case is False
    s = c.statement()
    assert s.startswith("Released under (1, 1e-05)-DP only on data of its model, NOT worst-case DP (")
    assert "spiked sub-Gaussian model" in s
    for key, alg in REGISTRY.items():          # the registry's flag and every plan's contract agree
        d = 0.0 if alg.measure == "pure" else 1e-5
        c = alg.plan(200, 5, 2, 1.0, d, **alg.quick).contract
        assert c.worst_case == alg.worst_case, key
        assert ("NOT worst-case" in c.guarantee) == (not alg.worst_case), key


@pytest.mark.parametrize("key", [a.key for a in algorithms().values() if not a.worst_case])
def test_model_only_statement_printed_by_the_cli(key, tmp_path, capsys):
    "The command line prints the contract's words: a guarantee on data of a model only says so (SGPCA's)."
    from dppca_nb.cli import main
    data = tmp_path / "data.csv"
    np.savetxt(data, np.random.default_rng(0).normal(size=(200, 5)) / 3, delimiter=",")
    assert main(["fit", str(data), "--method", key.replace("_", "-"), "-k", "2", "--epsilon", "1", "--delta", "1e-5",
                 "--out", str(tmp_path / "v.csv"), "--seed", "0"]) == 0
    out = capsys.readouterr()
    line = next(ln for ln in out.out.splitlines() if ln.startswith("Privacy:"))
    assert line.startswith("Privacy: NOT worst-case DP: ") and "only on data of its model" in line, line   # said first


# --- 4. a step the pipeline cannot certify ------------------------------------------------------------------

def test_function_transformer_before_private_step_is_refused():
    from sklearn.preprocessing import FunctionTransformer, Normalizer
    to_ball = lambda Z: Z / np.linalg.norm(Z, axis=1).max()      # a function of the whole batch
    Xb = np.random.default_rng(0).normal(size=(500, 4))
    Xb2 = Xb.copy(); Xb2[0] = 50 * np.eye(4)[0]
    def moment(Z):
        Z = to_ball(Z); Z = Z / np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1.0)
        return Z.T @ Z / len(Z)
    # one record moves the statistic far beyond the sensitivity sqrt(2)/n the private step assumes (measured 42.7x)
    assert np.linalg.norm(moment(Xb) - moment(Xb2)) > 40 * math.sqrt(2) / 500
    acc = PrivacyAccountant(5.0, 1e-4)
    pipe = private_pipeline(FunctionTransformer(to_ball), AnalyzeGaussPCA(2, centering="none", random_state=0),
                            accountant=acc)
    with pytest.raises(ValueError, match="cannot be certified to act on each row alone"):
        pipe.fit(Xb)
    with pytest.raises(ValueError, match="functiontransformer"):
        pipe.fit_transform(Xb)
    assert acc.ledger == [] and not hasattr(pipe[-1], "components_")   # nothing fitted, nothing spent
    from dppca_nb.preprocessing import uncertified_steps
    assert uncertified_steps(pipe) == ["functiontransformer"]
    assert uncertified_steps(private_pipeline(Normalizer(), AnalyzeGaussPCA(2))) == []


# --- 5. the clipping warning and the committed outputs -------------------------------------------------------

def _clip_warnings(fit):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fit()
    return [str(x.message) for x in w if issubclass(x.category, ClippingWarning)]

COUNT = re.compile(r"\b\d+ of \d+\b|\(\d+(\.\d+)?\s?%\)|\b\d+ (rows?|values?|records?)\b[^\n]{0,60}\bclipped"
                   r"|\bclipped\b[^\n]{0,20}:\s*\d+\b")


def test_clipping_warning_has_no_count():
    rng = np.random.default_rng(0)
    X1 = rng.normal(size=(300, 4))                                # most rows above the default bound 1
    X2 = X1.copy(); X2[:40] /= 50                                 # 40 fewer rows clipped
    w1 = _clip_warnings(lambda: AnalyzeGaussPCA(2, centering="none", random_state=0).fit(X1))
    w2 = _clip_warnings(lambda: AnalyzeGaussPCA(2, centering="none", random_state=0).fit(X2))
    assert len(w1) == 1 and w1 == w2                              # the same words whatever the count
    n1 = AnalyzeGaussPCA(2, centering="none", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClippingWarning); n1.fit(X1)
    count = n1.diagnostics_not_private_["n_clipped"]
    assert count > 30 and str(count) not in w1[0] and not COUNT.search(w1[0])
    assert "radius" in w1[0] and "diagnostics_not_private_" in w1[0] and "do not publish" in w1[0]
    ws = _clip_warnings(lambda: PrivateStandardScaler(random_state=0).fit(X1 * 3))
    assert len(ws) == 1 and not COUNT.search(ws[0]) and "bounds" in ws[0]


def _output_texts(o):
    if "text" in o: yield "".join(o["text"])
    for k, v in (o.get("data") or {}).items():
        if k.startswith("text/"): yield "".join(v) if isinstance(v, list) else v
    if o.get("output_type") == "error": yield "\n".join(o.get("traceback", []))


def _shows_count(line: str) -> bool:
    """A line that states how many rows or values were clipped (a curator-only diagnostic labelled NOT PRIVATE aside).
    The released clipped shares (a noisy count on a public lattice) and the budget parts that name them are private."""
    line = RELEASED_SHARE.sub("", line)
    return bool(re.search("clip", line, re.I) and COUNT.search(line)) and "NOT PRIVATE" not in line


RELEASED_SHARE = re.compile(r"the share of rows the (mean's )?norm bound clipped|\w*clipped_share\w*|the clipping check")


def test_no_committed_output_or_readme_shows_a_clipped_count():
    assert _shows_count("ClippingWarning: AnalyzeGaussPCA: 1198 of 10000 of the rows (12%) had a norm above ...")
    assert _shows_count("150 rows were clipped") and not _shows_count("rows clipped to ||x||_2 <= 1; n=1000")
    assert not _shows_count("the budget was spent on the share of rows the norm bound clipped (1%), the mean (8.8%)")
    assert not _shows_count("the budget was spent on the clipping check (10%), the column means and scales (45%)")
    found = []
    for f in sorted((ROOT / "nbs").rglob("*.ipynb")):
        for c in json.loads(f.read_text())["cells"]:
            for o in c.get("outputs", []):
                for t in _output_texts(o):
                    found += [f"{f.relative_to(ROOT)} {c.get('id')}: {ln[:120]}" for ln in t.splitlines() if _shows_count(ln)]
    found += [f"README.md: {ln[:120]}" for ln in (ROOT / "README.md").read_text().splitlines() if _shows_count(ln)]
    assert found == [], "\n".join(found)
