"""The private pictures (dppca_nb.algorithms.pictures): what the chapter's reading flow leaves out.

A record of the grouped score plot is (features, label): replacing it may change its label, and the release must still
move only two counts; the noise drawn has the contract's scale; a picture of a fitted estimator spends on its ledger all
or nothing before reading the records, publishes the same public record on neighbouring data, and leaves the caller's
arrays alone; bad input names its argument. (The table-driven neighbour and sensitivity tests of every picture release
are in tests/test_neighbours.py and tests/test_sensitivity.py.)"""
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from dppca_nb.algorithms import pictures as PI
from dppca_nb.privacy.accounting import BudgetExceededError, PrivacyAccountant
from dppca_nb.privacy.contract import Contract

N, P = 60, 5
EPS, DLT = 1.0, 1e-5


def _data(seed=0, n=N):
    return np.random.default_rng(seed).normal(size=(n, P)) * np.array([0.5, 0.3, 0.2, 0.1, 0.1])


def _estimator(k=3, acc=None):
    "A stand-in for a fitted private PCA: released components_ and mean_ (public values), its ledger."
    Q = np.linalg.qr(np.random.default_rng(1).standard_normal((P, P)))[0][:, :k]
    return SimpleNamespace(components_=Q.T, mean_=np.full(P, 0.01), accountant_=acc or PrivacyAccountant(),
                           contract_=Contract("the directions (a stand-in)", 1.0, 1e-6), explained_variance_=np.arange(k, 0, -1.0))


# --- a record's group label is part of the record ----------------------------------------------------------------

@pytest.mark.parametrize("variant", PI.HISTOGRAMS)
def test_group_change_moves_two_counts(variant):
    """Replacing record 0 by one with another label and another cell moves exactly two counts by one; the contract and
    every value that does not move with the seed are the same on both data sets."""
    X = _data()
    Y = X.copy(); Y[0] = -X[0] * 3
    la = np.arange(N) % 3
    lb = la.copy(); lb[0] = (la[0] + 1) % 3
    est = _estimator(2)
    V, c = PI.released_basis(est, axes=(0, 1))
    frame = np.array([0.0, 0.0, 1.0])
    ha = PI.score_counts(PI.projected_rows(X, V, c), frame, (4, 4), la, 3)
    hb = PI.score_counts(PI.projected_rows(Y, V, c), frame, (4, 4), lb, 3)
    assert np.abs(ha - hb).sum() == 2 and np.abs(ha - hb).max() == 1
    plan = PI.plan_private_scores(N, P, 2, EPS, DLT, bins=(4, 4), variant=variant, n_groups=3)
    ra = plan.release(X, 3, basis=V, center=c, labels=la)
    rb = plan.release(Y, 3, basis=V, center=c, labels=lb)
    assert ra.contract.as_dict() == rb.contract.as_dict()
    assert plan.contract.part("histogram").sensitivity == (math.sqrt(2) if variant == "gaussian" else 2.0)


def test_unlisted_labels_enter_no_histogram():
    "A label outside the public list counts nowhere (how many: curator-only)."
    X = _data()
    labels = np.array(["a", "b", "zz"] * (N // 3))
    pic = PI.private_scores(_estimator(2), X, EPS, DLT, bins=(3, 3), labels=labels, groups=["a", "b"], random_state=0)
    assert pic.release.diagnostics["unlisted"] == N // 3
    assert "unlisted" not in json.dumps(PI.picture_record(pic))
    assert pic.values["counts"].shape == (2, 3, 3)


# --- the noise drawn is the contract's ---------------------------------------------------------------------------

def test_gaussian_histogram_noise():
    "Counts far from 0 (no clipping at 0): the noisy minus the exact counts have sd sigma (2000 draws: within 4 x 1.6%)."
    c = PI.histogram_contract(N, 100, EPS, DLT)
    h = np.full((1, 10, 10), 1000.0)
    d = np.concatenate([(PI.release_histogram(h, c, np.random.default_rng(s)) - h).ravel() for s in range(20)])
    assert np.std(d) == pytest.approx(c.noise_scale, rel=4 * 0.016)


def test_sparse_histogram_noise_and_threshold():
    "Released counts: Laplace(2/eps) around the exact ones (sd 2 sqrt 2 / eps, 20000 draws: 4 x 1.5%); below the threshold: 0."
    c = PI.histogram_contract(N, 100, EPS, DLT, "sparse")
    h = np.full((1, 10, 10), 1000.0)
    d = np.concatenate([(PI.release_histogram(h, c, np.random.default_rng(s)) - h).ravel() for s in range(200)])
    assert np.std(d) == pytest.approx(math.sqrt(2) * 2 / EPS, rel=4 * 0.015)
    one = np.ones((1, 100, 100))
    out = PI.release_histogram(one, c, np.random.default_rng(0))
    # a count of 1 is released with probability delta / 4 = 2.5e-6 per cell: none of 10^4 cells, with probability 0.975
    assert (out == 0).all()


def _recovered_noise(method, seeds=150, **opts):
    """The noise each release drew, recovered from its released scales (extras) and the exact statistic at them: one
    vector per seed, and the contract's sd."""
    n, k = 400, 2
    X = _data(n=n)
    V = np.eye(P)[:, :k]
    plan = PI.plan_private_scree(n, P, k, EPS, DLT, method=method, **opts)
    Z = PI.projected_rows(X, V)
    out = []
    for s in range(seeds):
        r = plan.release(X, s, basis=V)
        e, R = r.extras, r.extras["radius"]
        Zc = PI.clip_rows(Z, R)[0]
        if method == "clipped":
            out.append(e["scree_raw"] / e["caps"] ** 2 - PI.clipped_scree_statistic(Z, R, e["caps"]))
        elif method == "pmwm":
            L, U = e["lower"], e["upper"]
            with np.errstate(invalid="ignore", divide="ignore"):
                out.append((e["scree_raw"] - n / (n - 1) * L ** 2) / (U ** 2 - L ** 2)
                           - PI.winsorized_scree_statistic(Zc[n // 2:], L, U, n))
        else:                                            # one step from mu = 0: raw = n/(n-1) tau (g(0) + noise)
            out.append(e["scree_raw"] * (n - 1) / n / e["tau"] - PI.huber_gradient(Zc, 0.0, e["tau"]))
    part = "steps" if method == "huber" else "means"
    return np.array(out), PI._part(plan.contract, part).noise_scale


@pytest.mark.parametrize("method,opts", [("clipped", {}), ("pmwm", {}), ("huber", dict(n_steps=1))])
def test_scree_noise_drawn(method, opts):
    "The noise of every scree method has the contract's sd (300 draws: the sample sd within 4 x 4.1% of sigma) and mean 0."
    d, sigma = _recovered_noise(method, **opts)
    d = d[np.isfinite(d)]                     # a component whose released quantiles coincide has nothing noised
    assert d.size >= 250
    assert np.std(d) == pytest.approx(sigma, rel=4 * 0.041)
    assert abs(np.mean(d)) < 4 * sigma / math.sqrt(d.size)


# --- pictures of an estimator --------------------------------------------------------------------------------------

def test_spend_all_or_nothing():
    "A picture over the ledger's budget spends nothing and reads nothing."
    acc = PrivacyAccountant(1.0, 1e-5)
    est = _estimator(acc=acc)
    with pytest.raises(BudgetExceededError):
        PI.private_scree(est, _data(), 2.0, 1e-5, random_state=0)
    assert acc.ledger == []
    pic = PI.private_scree(est, _data(), 0.5, 5e-6, random_state=0)
    assert [s.label for s in acc.ledger] == ["scree.clipped.radius", "scree.clipped.caps", "scree.clipped.means"]
    assert acc.spent() <= 0.5 + 1e-9 and pic.accountant is acc


@pytest.mark.parametrize("kind", ["scree", "scores", "scores_grouped"])
def test_record_public_part_is_the_same_on_neighbours(kind):
    "The JSON record's public part depends on public quantities only: identical on neighbouring data sets."
    X = _data()
    Y = X.copy(); Y[0] = [5.0, -4.0, 3.0, 0.0, 1.0]
    def rec(Z):
        est = _estimator()
        if kind == "scree": return PI.picture_record(PI.private_scree(est, Z, EPS, DLT, random_state=1))
        if kind == "scores": return PI.picture_record(PI.private_scores(est, Z, EPS, DLT, bins=(4, 4), random_state=1))
        lab = ["u", "v"] * (N // 2)
        return PI.picture_record(PI.private_scores(est, Z, EPS, DLT, bins=(4, 4), labels=lab, groups=["u", "v"], random_state=1))
    a, b = rec(X), rec(Y)
    assert a["public"] == b["public"]
    assert a["released"] != b["released"]
    json.dumps(a)


def test_caller_arrays_untouched():
    X = _data(); X0 = X.copy()
    est = _estimator(); C0, m0 = est.components_.copy(), est.mean_.copy()
    labels = np.arange(N) % 2
    PI.private_scree(est, X, EPS, DLT, method="huber", random_state=0)
    PI.private_scores(est, X, EPS, DLT, labels=labels, groups=[0, 1], random_state=0)
    assert (X == X0).all() and (est.components_ == C0).all() and (est.mean_ == m0).all()


def test_released_spectrum_spends_nothing():
    est = _estimator()
    pic = PI.private_scree(est, None, method="released")
    assert pic.release is None and est.accountant_.ledger == []
    assert pic.values["pve"].tolist() == pytest.approx([0.5, 1 / 3, 1 / 6])


def test_bad_input_names_the_argument():
    est = _estimator()
    X = _data()
    with pytest.raises(ValueError, match="est: expected a fitted"): PI.private_scree(SimpleNamespace(), X)
    with pytest.raises(ValueError, match="k: the estimator released 3"): PI.private_scree(est, X, k=4)
    with pytest.raises(ValueError, match="axes"): PI.private_scores(est, X, axes=(0, 0))
    with pytest.raises(ValueError, match="axes"): PI.private_scores(est, X, axes=(0, 3))
    with pytest.raises(ValueError, match="groups"): PI.private_scores(est, X, labels=np.zeros(N))
    with pytest.raises(ValueError, match="labels: expected one label"): PI.private_scores(est, X, labels=[0], groups=[0])
    with pytest.raises(ValueError, match="groups: expected a non-empty"): PI.private_scores(est, X, labels=np.zeros(N), groups=[0, 0])
    with pytest.raises(ValueError, match="method"): PI.private_scree(est, X, method="mean")
    with pytest.raises(ValueError, match="released"): PI.private_scree(SimpleNamespace(components_=np.eye(P)[:2], mean_=np.zeros(P)), X, method="released")
    with pytest.raises(ValueError, match="order"): PI.private_scree(est, X, order="up")
    with pytest.raises(ValueError, match="bins"): PI.plan_private_scores(N, P, 2, EPS, DLT, bins=(3,))
    with pytest.raises(ValueError, match="frame_share"): PI.plan_private_scores(N, P, 2, EPS, DLT, frame_share=1.0)
    with pytest.raises(ValueError, match="step_size"): PI.plan_private_scree(N, P, 2, EPS, DLT, method="huber", step_size=2.0)
    with pytest.raises(ValueError, match="radius_share"): PI.plan_private_scree(N, P, 2, EPS, DLT, radius_share=0.0)
    with pytest.raises(ValueError, match="delta"): PI.plan_private_scree(N, P, 2, EPS, 0.0)
    with pytest.raises(ValueError, match="level"): PI.decreasing_scree([1.0], 0.1, level=1.0)
    with pytest.raises(TypeError, match="pic: expected a Picture"): PI.picture_record({})
    with pytest.raises(TypeError, match="accountant: expected"): PI.private_scree(est, X, accountant=3)


def test_plots_draw():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    est = _estimator()
    X = _data()
    ax = PI.plot_scree(PI.private_scree(est, X, EPS, DLT, random_state=0), reference=[0.6, 0.3, 0.1])
    assert len(ax.lines) >= 2
    pic = PI.private_scores(est, X, EPS, DLT, bins=(4, 4), labels=np.arange(N) % 2, groups=[0, 1], random_state=0)
    assert len(PI.plot_scores(pic)) == 2
    pts, g = PI.sample_scores(pic, 50, random_state=0)
    assert pts.shape == (50, 2) and set(g.tolist()) <= {0, 1}
    PI.plot_scores(pic, kind="points", random_state=0)
    with pytest.raises(ValueError, match="scores picture|score picture"): PI.plot_scores(PI.private_scree(est, X, EPS, DLT, random_state=0))
    plt.close("all")
