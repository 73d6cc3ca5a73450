"""One ledger, many threads: a check and its record are one step under the ledger's lock, and a fit holds its budget
from the check before the data to the spend after, so concurrent spends and fits never overrun the budget and a refused
fit never reads the data. A fit that fails after it read the data is charged, labelled as failed.

Deterministic: the race is made certain, not likely. `compose` is slowed inside the check (every thread is inside it at
once without the lock), and a planted release waits at a gate until every thread has either reached it or been refused.
"""
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import dppca_nb.privacy.accounting as A
from dppca_nb.estimators import ESTIMATORS, AnalyzeGaussPCA, _PrivateFit
from dppca_nb.privacy.accounting import BudgetExceededError, PrivacyAccountant
from dppca_nb.privacy.contract import Plan

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")     # the fits' UtilityWarnings: not under test here

X = np.random.default_rng(0).normal(size=(300, 4)) / 4
THREADS, EACH = 8, 0.3                                  # floor(1 / 0.3) = 3 fit a pure budget of 1


def test_concurrent_spends_never_overrun(monkeypatch):
    slow = A.compose
    def compose(*a, **k):                               # the check takes 20 ms: without a lock all 8 pass it together
        time.sleep(0.02)
        return slow(*a, **k)
    monkeypatch.setattr(A, "compose", compose)
    acc, gate = PrivacyAccountant(1.0), threading.Barrier(THREADS)
    def spend(_):
        gate.wait()
        try: acc.spend(EACH, label="t"); return True
        except BudgetExceededError: return False
    with ThreadPoolExecutor(THREADS) as pool: won = list(pool.map(spend, range(THREADS)))
    assert sum(won) == math.floor(1 / EACH) == len(acc.ledger) == 3
    assert slow(acc.ledger, 0.0) <= 1.0 * (1 + 1e-12)   # never over the budget


def test_concurrent_fits_hold_their_budget(monkeypatch):
    "8 fits of epsilon 0.3 on a basic budget of 1: 3 read the data and spend, 5 are refused before reading anything."
    acc = PrivacyAccountant(1.0, 1e-4, composition="basic")
    state = threading.Condition()
    counts = {"read": 0, "refused": 0}
    go = threading.Event()
    plan_of = _PrivateFit._plan
    def plan(self, n, p, k):
        pl = plan_of(self, n, p, k)
        def run(Z, rng, **kw):                          # reached only by a fit whose budget is held
            with state: counts["read"] += 1; state.notify_all()
            assert go.wait(30)
            return pl.run(Z, rng, **kw)
        return Plan(pl.contract, run, pl.inputs, pl.ledger)
    monkeypatch.setattr(_PrivateFit, "_plan", plan)
    def fit(_):
        try:
            AnalyzeGaussPCA(1, epsilon=EACH, delta=1e-5, radius=1.0, centering="none", accountant=acc,
                            random_state=None).fit(X)
            return True
        except BudgetExceededError:
            with state: counts["refused"] += 1; state.notify_all()
            return False
    with ThreadPoolExecutor(THREADS) as pool:
        futures = [pool.submit(fit, i) for i in range(THREADS)]
        with state: assert state.wait_for(lambda: counts["read"] + counts["refused"] == THREADS, timeout=60), counts
        go.set()
        won = [f.result() for f in futures]
    assert counts == {"read": 3, "refused": 5} and sum(won) == 3
    assert len(acc.ledger) == 3 and acc._held == [] and acc.spent() <= 1.0 * (1 + 1e-12)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_a_fit_that_fails_after_reading_is_charged(name):
    "A non-finite value, refused as the release reads the rows: every part of the plan is charged, labelled failed."
    bad = X.copy()
    bad[5, 1] = np.nan
    acc = PrivacyAccountant(None, 1e-5)
    est = ESTIMATORS[name](accountant=acc, random_state=0)
    with pytest.raises(ValueError, match="finite"): est.fit(bad)
    assert acc.ledger and all(s.label.startswith(name + ".") and s.label.endswith(" (failed)") for s in acc.ledger)
    assert acc._held == []
    ok = PrivacyAccountant(None, 1e-5)
    ESTIMATORS[name](accountant=ok, random_state=0).fit(X)   # the same plan, fitted: the same entries, not failed
    assert [s.label + " (failed)" for s in ok.ledger] == [s.label for s in acc.ledger]
    assert [(s.epsilon, s.delta, s.rho) for s in ok.ledger] == [(s.epsilon, s.delta, s.rho) for s in acc.ledger]

