"""A ledger spends only in its own process: the fits GridSearchCV(n_jobs=2) sends to joblib's worker processes are
refused (before they read the data) instead of spending on a copy of the ledger, or on the worker's own default ledger,
that the parent never sees; with n_jobs=1 every fit is recorded, as before. Threads share an explicit ledger, and a
fit in a thread that does not see the main thread's `with` block is refused rather than spent outside it.

The data are tiny (200 x 5), with cv=2 and two candidates: 4 fits in the workers; loky's workers start once per
test process and are reused, so the file takes a few seconds beyond that start.
"""
import multiprocessing
import warnings

import numpy as np
import pytest
from joblib import Parallel, delayed
from sklearn.model_selection import GridSearchCV

from dppca_nb.estimators import AnalyzeGaussPCA
from dppca_nb.privacy.accounting import LedgerProcessError, PrivacyAccountant, default_accountant

X = np.random.default_rng(0).normal(size=(200, 5)) / 4
GRID, CV = {"n_components": [1, 2]}, 2
FITS = CV * len(GRID["n_components"]) + 1                   # the cross-validation fits and the refit


def _search(n_jobs, accountant=None, **kw):
    est = AnalyzeGaussPCA(epsilon=0.5, delta=1e-7, radius=10.0, accountant=accountant, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                     # the estimator's PrivacyWarning on pickling, among others
        return GridSearchCV(est, GRID, cv=CV, n_jobs=n_jobs, **kw).fit(X)


def test_forked_child_inherits_no_ledger():
    "A fork copies the parent's default ledger and its open blocks: a fit in the child is refused, not recorded there."
    default_accountant()                                    # the parent's ledger exists before the fork
    ctx = multiprocessing.get_context("fork")
    with PrivacyAccountant() as blk, ctx.Pool(1) as pool:
        with pytest.raises(LedgerProcessError, match="default ledger"):
            pool.apply(AnalyzeGaussPCA(1, radius=10.0, random_state=0).fit, (X,))
    assert blk.ledger == []


def test_fits_in_workers_are_refused():
    "Explicit accountant, default ledger, `with` block: every fit in a worker fails, and scikit-learn says so."
    acc, before = PrivacyAccountant(1.0, 1e-5), len(default_accountant().ledger)   # a copy per worker: all would run
    with pytest.raises(ValueError, match=r"(?s)All the 4 fits failed.*LedgerProcessError.*copied into process"):
        _search(2, acc)
    with pytest.raises(ValueError, match=r"(?s)All the 4 fits failed.*default ledger: this process \(\d+\) is a worker"):
        _search(2)
    with PrivacyAccountant(1.0, 1e-5) as blk:
        with pytest.raises(ValueError, match=r"(?s)All the 4 fits failed.*default ledger"): _search(2)
    # nothing ran in this process, so nothing was spent on any ledger (no refit: every candidate failed)
    assert acc.ledger == [] and blk.ledger == [] and len(default_accountant().ledger) == before


def test_n_jobs_1_records_every_fit():
    acc = PrivacyAccountant(None, 1e-5)
    gs = _search(1, acc)
    parts = len(gs.best_estimator_._spends)
    assert parts >= 1 and len(acc.ledger) == FITS * parts
    assert sum(s.label.endswith(".components") for s in acc.ledger) == FITS
    assert gs.best_estimator_.accountant is acc             # clone kept the ledger by reference
    before = len(default_accountant().ledger)
    with PrivacyAccountant() as blk: _search(1)
    assert len(blk.ledger) == FITS * parts and len(default_accountant().ledger) == before
    _search(1)
    assert len(default_accountant().ledger) == before + FITS * parts


def test_ledger_made_in_the_worker_spends_there():
    def fit_here(X):                # pickled by value (a local function): runs in a loky worker
        acc = PrivacyAccountant(None, 1e-5)
        AnalyzeGaussPCA(1, epsilon=0.5, delta=1e-7, radius=10.0, accountant=acc, random_state=0).fit(X)
        with PrivacyAccountant() as blk: AnalyzeGaussPCA(1, radius=10.0, random_state=0).fit(X)
        return multiprocessing.parent_process() is not None, len(acc.ledger), len(blk.ledger)
    for worker, n_acc, n_blk in Parallel(n_jobs=2)(delayed(fit_here)(X) for _ in range(2)):
        assert worker and n_acc >= 1 and n_blk >= 1


def test_threads_share_an_explicit_ledger_but_not_a_block():
    "joblib's threading backend: threads spend on the shared accountant; a block of the main thread is not theirs."
    from joblib import parallel_backend
    acc = PrivacyAccountant(None, 1e-5)
    with parallel_backend("threading"):
        gs = _search(2, acc)
        assert len(acc.ledger) == FITS * len(gs.best_estimator_._spends)
        before = len(default_accountant().ledger)
        with PrivacyAccountant(1.0, 1e-5) as blk:     # 4 fits of epsilon 0.5 would run outside its budget
            with pytest.raises(ValueError, match=r"(?s)All the 4 fits failed.*open in another thread"): _search(2)
    assert blk.ledger == [] and len(default_accountant().ledger) == before


def test_error_score_raise_raises_the_refusal():
    "Last in the file: a raising worker makes joblib shut its workers down (the next search starts new ones)."
    acc = PrivacyAccountant(1.0, 1e-5)
    with pytest.raises(LedgerProcessError, match=r"copied into process \d+ .*nothing is spent.*n_jobs=1"):
        _search(2, acc, error_score="raise")
    assert acc.ledger == []
