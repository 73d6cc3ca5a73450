"""The cost of AdaptiveNoisePCA's fit against one X.T @ X: the rows of `defaults.py`'s cost table for AdaptiveNoisePCA
(n = 1e5, p = 100, k = 5, the reference design, epsilon 1, delta 1e-4), and where the default fit's time goes.

Usage: python benchmarks/adaptive_cost.py [--repeat 5] [--label TEXT] [--out benchmarks/adaptive_cost.jsonl]
                                          [--report benchmarks/adaptive_cost.md] [--report-only]

One BLAS thread (threadpoolctl, and OPENBLAS_NUM_THREADS=1). Ratios: the best wall (and CPU) seconds of each fit over
`--repeat` interleaved rounds with one X.T @ X in the same rounds (both sides of a ratio meet the same load). The
breakdown: three cProfile'd default fits, each step's least cumulative seconds over the best X.T @ X (cProfile adds a
little to the Python-heavy steps). Rows are appended to the JSONL file with the `--label` (the code measured: run it with
PYTHONPATH at another checkout to measure that code); the report shows every label's rows side by side, and of
several runs of one label the one with the least ratio (the machine is shared: a loaded run only adds time).
"""
from __future__ import annotations
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402,F401 (numpy before any BLAS thread starts)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from defaults import _reference, _interleaved, ADAPTIVE_CASES, DELTA  # noqa: E402

N, P, K = 100_000, 100, 5
CASES = ADAPTIVE_CASES[:3]          # public bound, defaults, defaults without the ordering step
STEPS = {                           # label: the "file:function" names whose cumulative time it is (none nested)
    "plan (budget, contracts)": ("fit.py:_plan",),
    "coarse location (private, on the public subsample)": ("grid_releases.py:_coordinate_counts",),
    "private radii (norm histograms)": ("grid_releases.py:row_norm_histogram",),
    "private mean's pass (clipped row sums)": ("moments.py:clipped_row_sums", "centered_moments.py:clipped_row_sums_pass"),
    "warm start's exact sum (moment_sum)": ("adaptive.py:moment_sum",),
    "probe (distances of all rows, one spread)": ("adaptive.py:_probe",),
    "Analyze Gauss finish (second release)": ("adaptive.py:_gauss_finish",),
    "adaptive passes": ("adaptive.py:_pass",),
    "ordering step (projected sums)": ("centering.py:_projected_sums",),
    "expected error (the estimator's)": ("subspace.py:_assess",),
}


def _est(kw):
    from dppca_nb.estimators import AdaptiveNoisePCA
    return AdaptiveNoisePCA(n_components=K, epsilon=1.0, delta=DELTA, random_state=0, **kw)


def _code(label):
    import dppca_nb
    where = Path(dppca_nb.__file__).resolve().parent.parent
    if label: return label
    try: return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=where).stdout.strip()
    except OSError: return "unknown"


def cost_rows(X, repeat, code) -> list:
    fns = [("one X.T @ X", lambda: X.T @ X)] + [(lab, (lambda kw=kw: _est(kw).fit(X))) for lab, kw in CASES]
    best, cpu = _interleaved(fns, repeat)
    x = best["one X.T @ X"]
    return [dict(section="cost", code=code, design=f"n={N:.0e}, p={P}, k={K}", label=lab, seconds=best[lab],
                 xtx_seconds=x, ratio=best[lab] / x, cpu_ratio=cpu[lab] / cpu["one X.T @ X"]) for lab, _ in CASES]


def breakdown(X, xtx, code, fits=3) -> dict:
    "Each step's least cumulative seconds over `fits` cProfile'd default fits (and the least whole fit), over one X'X."
    import cProfile
    import pstats
    import warnings
    hit = lambda file, f, names: any(Path(file).name + ":" + f == a for a in names)
    best, total = {a: float("inf") for a in list(STEPS) + ["other"]}, float("inf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _est({}).fit(X)
        for _ in range(fits):
            pr = cProfile.Profile()
            t = time.perf_counter()
            pr.enable()
            _est({}).fit(X)
            pr.disable()
            t = time.perf_counter() - t
            st = pstats.Stats(pr).stats
            steps = {lab: sum(ct for (file, _, f), (_, _, _, ct, _) in st.items() if hit(file, f, fns)) for lab, fns in STEPS.items()}
            steps["other"] = t - sum(steps.values())
            best = {a: min(best[a], steps[a]) for a in best}
            total = min(total, t)
    return dict(section="breakdown", code=code, design=f"n={N:.0e}, p={P}, k={K}", label="defaults", seconds=total,
                xtx_seconds=xtx, steps={a: v / xtx for a, v in best.items()})


def report(rows) -> str:
    codes = list(dict.fromkeys(r["code"] for r in rows))
    out = ["# AdaptiveNoisePCA: the cost of a fit against one X'X", "",
           "Produced by `python benchmarks/adaptive_cost.py` (rows in `benchmarks/adaptive_cost.jsonl`); one BLAS thread "
           "(threadpoolctl), 2 shared cores. The reference design of `defaults.py` at n = 1e5, p = 100, k = 5, epsilon 1, "
           "delta 1e-4, random_state 0. Each ratio is the best of the interleaved rounds over one X.T @ X in the same "
           "rounds; each code's rows come from its own runs (the label names the code; several runs: the one with the least ratio, the others lost to the shared machine's load). The settings are the "
           "AdaptiveNoisePCA rows of `defaults.md`'s cost table.", "",
           "| code | setting | time | x one X'X (wall) | x one X'X (CPU) |", "|---|---|---|---|---|"]
    last = {}                          # per code and setting: the run where the ratio was least (the quietest machine)
    for r in rows:
        k = (r["code"], r["label"])
        if r["section"] == "cost" and (k not in last or r["ratio"] < last[k]["ratio"]): last[k] = r
    for (c, lab), r in last.items():
        out.append(f"| {c} | {lab} | {1e3 * r['seconds']:.0f} ms | {r['ratio']:.2f} | {r['cpu_ratio']:.2f} |")
    br = {}
    for r in rows:
        if r["section"] == "breakdown" and (r["code"] not in br or r["seconds"] / r["xtx_seconds"] <
                                            br[r["code"]]["seconds"] / br[r["code"]]["xtx_seconds"]): br[r["code"]] = r
    if br:
        out += ["", "Where the default fit's time goes (three cProfile'd fits; each step's least cumulative seconds over one "
                "X.T @ X of the same run; 'other': the rest of the fit, least over the fits):", "",
                "| step | " + " | ".join(c for c in codes if c in br) + " |", "|---|" + "---|" * len(br)]
        labels = list(STEPS) + ["other"]
        for lab in labels:
            out.append(f"| {lab} | " + " | ".join(f"{br[c]['steps'].get(lab, 0):.2f}" for c in codes if c in br) + " |")
        out.append("| whole fit (profiled) | " + " | ".join(f"{br[c]['seconds'] / br[c]['xtx_seconds']:.2f}" for c in codes if c in br) + " |")
        c = [c for c in codes if c in br][-1]
        top = sorted(((v, a) for a, v in br[c]["steps"].items() if a != "other"), reverse=True)[:3]
        out += ["", f"The largest steps of {c}'s default fit: " + "; ".join(f"{a} {v:.2f}x" for v, a in top) +
                " one X'X (each a pass or part of one; the whole fit is their sum and the rest). The moment_sum row "
                "counts every exact second-moment pass of the adaptive release: also the Analyze Gauss finish's, where "
                "that reads the rows for its own sum (then the two rows overlap and 'other' comes out below 0)."]
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--label", default=None, help="the code measured (default: the short commit of dppca_nb's checkout)")
    ap.add_argument("--out", default=str(HERE / "adaptive_cost.jsonl"))
    ap.add_argument("--report", default=str(HERE / "adaptive_cost.md"))
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args(argv)
    if not a.report_only:
        from threadpoolctl import threadpool_limits
        code = _code(a.label)
        X, _, _ = _reference(N, p=P, k=K)
        with threadpool_limits(limits=1, user_api="blas"):
            rows = cost_rows(X, a.repeat, code)
            rows.append(breakdown(X, rows[0]["xtx_seconds"], code))
        with open(a.out, "a") as f:
            for r in rows: f.write(json.dumps(r) + "\n")
        for r in rows[:-1]: print(f"[cost] {code} {r['label']}: {r['ratio']:.2f}x one X'X", file=sys.stderr)
    rows = [json.loads(x) for x in Path(a.out).read_text().splitlines()] if Path(a.out).exists() else []
    Path(a.report).write_text(report(rows))
    print(f"wrote {a.report}", file=sys.stderr)


if __name__ == "__main__":
    main()
