"""The scaled path's expected error with a private check of what clipping did (`preprocessing.release_clipping_turn`).

Usage: python benchmarks/scaled_clipping.py [--out benchmarks/scaled_clipping.jsonl] [--report benchmarks/scaled_clipping.md]
       python benchmarks/scaled_clipping.py --report-only

`dppca fit --scale private` as the CLI runs it (`cli.fit_estimator(..., scale="private")`: the private standard scaler
from public column bounds, then the method at the public bound sqrt(p), centering none) on the bundled real tables
(covtype_sample, digits, breast_cancer with the bounds of benchmarks/defaults.py; iris, wine, diabetes with those of
tools/real_tables.py), k = 2 and 5, epsilon 1, 3 and 10, delta 1e-5, seeds 0-2, three methods. For each fit:

- today: the expected error the CLI printed before it ran the check itself (`cli.fit_estimator(..., clip_check=False)`,
  then `cli.assess_fit`) and the measured error, ||P_hat - P||_F against the PCA
  of the exactly standardized table (as tools/real_tables.py measures it);
- with the check at share s of epsilon (0.05, 0.1, 0.2) and outer bound c x sqrt(p) (c = 2, 3, 4): the same pipeline at
  (1 - s) epsilon, then `release_clipping_turn` at s epsilon on its released components and spectrum
  (`cli.released_spectrum`), and `with_clipping_turn`'s expected error; measured again (the accuracy the share costs).

Within 2x: 0.5 <= expected / measured <= 2. One BLAS thread (threadpoolctl; OPENBLAS_NUM_THREADS=1).
"""
from __future__ import annotations
import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tools")]
METHODS = ("AnalyzeGaussPCA", "AdaptiveNoisePCA", "PureDPPCA")
SHARES, FACTORS, EPSILONS, KS = (0.05, 0.1, 0.2), (2.0, 3.0, 4.0), (1.0, 3.0, 10.0), (2, 5)


def tables() -> dict:
    "{name: (X, public bounds)} of the six bundled tables."
    import defaults as D
    from sklearn import datasets
    from real_tables import documented_bounds
    out = {t: (D.design(f"{t}_scaled")["X"], D.design(f"{t}_scaled")["bounds"]) for t in ("covtype_sample", "digits", "breast_cancer")}
    for t in ("iris", "wine", "diabetes"):
        d = getattr(datasets, f"load_{t}")()
        n, p = d.data.shape
        out[t] = (d.data, tuple(np.full((2, p), 5 / np.sqrt(n)) * [[-1], [1]]) if t == "diabetes" else tuple(documented_bounds(d, p)))
    return out


def scaled_fit(method, X, bounds, k, eps, seed):
    "The CLI's scaled fit: (pipeline, printed expected error, interval, released components V)."
    from dppca_nb.cli import fit_estimator, assess_fit, norm_bounds, get_method
    from dppca_nb.core.linalg import top_k_eigvecs
    opts = {}
    norm_bounds(get_method(method), opts, X.shape[1], bounds=bounds, scale="private")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = fit_estimator(method, X, k, eps, 1e-5, random_state=seed, scale="private", bounds=bounds, clip_check=False,
                             **opts)
        e, iv, _ = assess_fit(pipe, k)
    est = pipe[-1]
    return pipe, e, iv, est.components_.T if hasattr(est, "components_") else top_k_eigvecs(est.covariance_, k)


def run(out):
    from threadpoolctl import threadpool_limits
    from sklearn.preprocessing import StandardScaler
    from dppca_nb.cli import released_spectrum
    from dppca_nb.core.linalg import subspace_distance, top_k_eigvecs, random_subspace_level
    from dppca_nb.privacy.accounting import PrivacyAccountant
    from dppca_nb.preprocessing import release_clipping_turn, with_clipping_turn, clipping_turn_statistic
    with threadpool_limits(1, "blas"), open(out, "a") as f:
        for t, (X, B) in tables().items():
            n, p = X.shape
            for k in KS:
                if k >= p: continue
                Vt = top_k_eigvecs(np.cov(StandardScaler().fit_transform(X), rowvar=False, bias=True), k)
                level = random_subspace_level(p, k)
                for m in METHODS:
                    for eps in EPSILONS:
                        for seed in range(3):
                            row = dict(table=t, n=n, p=p, k=k, method=m, epsilon=eps, seed=seed, level=level)
                            try: pipe, e0, iv0, V0 = scaled_fit(m, X, B, k, eps, seed)
                            except Exception as ex:
                                f.write(json.dumps(dict(row, refused=str(ex)[:200])) + "\n"); continue
                            row.update(today=e0, today_interval=iv0, today_measured=subspace_distance(V0, Vt), checks=[])
                            R = float(pipe[-1].radius_)
                            for s in SHARES:
                                pipe1, e1, iv1, V1 = scaled_fit(m, X, B, k, eps * (1 - s), seed)
                                sp = released_spectrum(pipe1[-1], k)
                                Z1 = pipe1[0].transform(X)
                                for c in FACTORS:
                                    r = dict(share=s, factor=c, fit_expected=e1, measured=subspace_distance(V1, Vt))
                                    if sp is not None and e1 is not None:
                                        ct = release_clipping_turn(Z1, *sp, radius=R, outer_radius=c * R, epsilon=s * eps, cap=level,
                                                                   accountant=PrivacyAccountant(), random_state=np.random.default_rng([seed, 7]))
                                        ex, ivx = with_clipping_turn(e1, iv1, ct, level)
                                        r.update(released=ct.released, bias=ct.bias, expected=ex, interval=list(ivx),
                                                 noise_scale=None if ct.contract is None else ct.contract.noise_scale,
                                                 exact_t=clipping_turn_statistic(Z1, *sp, R, c * R))    # curator-only: to judge
                                    row["checks"].append(r)
                            f.write(json.dumps(row) + "\n"); f.flush()
                    print(f"[scaled_clipping] {t} k={k} {m} done {time.strftime('%X')}", file=sys.stderr, flush=True)


def _within(e, m): return e is not None and 0.5 <= e / max(m, 1e-12) <= 2


def report(rows) -> str:
    rows = [r for r in rows if "refused" not in r and r.get("today") is not None]
    L = ["# The scaled path's expected error with a private clipping check", "",
         "Produced by `python benchmarks/scaled_clipping.py` (rows in `benchmarks/scaled_clipping.jsonl`); the design is in "
         "the script's docstring. One BLAS thread, 2 shared cores. A fit counts where the expected error is within 2x of "
         "the measured error (0.5 <= expected / measured <= 2); fits whose printed expected error is None are left out "
         f"({len(rows)} fits kept).", "",
         "## How often the expected error is within 2x of the measured error", "",
         "| setting | " + " | ".join(f"eps {e:g}" for e in EPSILONS) + " | all | measured / today's measured (mean, max) |",
         "|---|" + "---|" * (len(EPSILONS) + 2)]
    def line(label, pick):
        cells, tot = [], []
        for e in EPSILONS:
            v = [pick(r) for r in rows if r["epsilon"] == e]
            v = [x for x in v if x is not None]
            cells.append(f"{sum(x[0] for x in v)}/{len(v)}"); tot += v
        rat = [x[1] for x in tot]
        L.append(f"| {label} | " + " | ".join(cells) + f" | {sum(x[0] for x in tot)}/{len(tot)} ({sum(x[0] for x in tot) / max(len(tot), 1):.0%}) | "
                 f"{np.mean(rat):.3f}, {np.max(rat):.3f} |")
    line("today (the CLI's printed expected error, the whole epsilon)", lambda r: (_within(r["today"], r["today_measured"]), 1.0))
    for s in SHARES:
        for c in FACTORS:
            def pick(r, s=s, c=c):
                x = next((y for y in r["checks"] if y["share"] == s and y["factor"] == c), None)
                if x is None or x.get("expected") is None: return None
                return _within(x["expected"], x["measured"]), x["measured"] / r["today_measured"]
            line(f"with the check: share {s:g}, outer bound {c:g} sqrt(p)", pick)
    chosen = [(r, next(y for y in r["checks"] if y["share"] == 0.1 and y["factor"] == 2.0)) for r in rows]
    chosen = [(r, x) for r, x in chosen if x.get("expected") is not None]
    over = [(r, x) for r, x in chosen if x["expected"] > 2 * x["measured"]]
    under = [(r, x) for r, x in chosen if x["expected"] < 0.5 * x["measured"]]
    L += ["", f"At the package's setting (share 0.1, outer bound 2 sqrt(p)): {len(over)} fits over-state the error by more "
          f"than 2x ({sum(x['fit_expected'] > 2 * x['measured'] for r, x in over)} of them because the fit's own expected "
          f"error already does; tables {sorted({r['table'] for r, x in over})}), {len(under)} under-state it "
          f"(tables {sorted({r['table'] for r, x in under})}; the released bias there: "
          + ", ".join(f"{abs(x['bias']):.2f}" for r, x in under) + ")."]
    cov = lambda v: (sum(iv[0] <= m <= iv[1] for iv, m in v), len(v), float(np.mean([iv[1] - iv[0] for iv, m in v])))
    c0 = cov([(r["today_interval"], r["today_measured"]) for r in rows if r.get("today_interval")])
    c1 = cov([(x["interval"], x["measured"]) for r, x in chosen if x.get("interval")])
    L += ["", f"The interval holds the measured error in {c0[0]}/{c0[1]} fits today (mean width {c0[2]:.2f}: where the released "
          f"clipped share is large the CLI already widens it to the random level) and in {c1[0]}/{c1[1]} with the check "
          f"(mean width {c1[2]:.2f})."]
    L += ["", "## By table and method (share 0.1, outer bound 2 sqrt(p); mean over the seeds)", "",
          "| table | method | k | eps | measured today | printed today | measured with the check | fit's own expected | bias (released) | expected with the check | within 2x today / with |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    g = {}
    for r in rows: g.setdefault((r["table"], r["method"], r["k"], r["epsilon"]), []).append(r)
    for (t, m, k, e), v in g.items():
        x = [next(y for y in r["checks"] if y["share"] == 0.1 and y["factor"] == 2.0) for r in v]
        if any(y.get("expected") is None for y in x): continue
        mean = lambda a: float(np.mean(a))
        L.append(f"| {t} | {m} | {k} | {e:g} | {mean([r['today_measured'] for r in v]):.3f} | {mean([r['today'] for r in v]):.3f} | "
                 f"{mean([y['measured'] for y in x]):.3f} | {mean([y['fit_expected'] for y in x]):.3f} | {mean([y['bias'] for y in x]):.3f} | "
                 f"{mean([y['expected'] for y in x]):.3f} | {sum(_within(r['today'], r['today_measured']) for r in v)}/{len(v)} / "
                 f"{sum(_within(y['expected'], y['measured']) for y in x)}/{len(x)} |")
    return "\n".join(L) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(HERE / "scaled_clipping.jsonl"))
    ap.add_argument("--report", default=str(HERE / "scaled_clipping.md"))
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args(argv)
    if not a.report_only: run(a.out)
    Path(a.report).write_text(report([json.loads(x) for x in Path(a.out).read_text().splitlines()]))
    print(f"wrote {a.report}", file=sys.stderr)


if __name__ == "__main__":
    main()
