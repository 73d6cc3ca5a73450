"""Run the benchmarks of dppca_nb and write benchmarks/results.md (and results.json beside it).

Usage: python benchmarks/run.py [--size full|small] [--blas-threads 1]
                                [--sections kendall,local,fantope,libraries,dask,bingham,explorers] [--merge]

Every row of the table is a ratio measured side by side in this one run; the BLAS threads are set with
threadpoolctl and stated in the table's header; the explorers' rows (the redraw of each teaching explorer
after a slider moves) have no baseline and give wall-clock and CPU time. The functions live in
benchmarks/suite.py (nbs/10_benchmarks/00_benchmarks.ipynb explains each section). The full run takes about 10 minutes on 2 cores.

--merge runs only the given sections and puts their results into the existing results.json/results.md
in place of the same sections, stating the environment they ran in. Use it to measure IBM diffprivlib
and OpenDP, which need scikit-learn<1.9, from a separate virtual environment:
    python -m venv /tmp/anchors
    /tmp/anchors/bin/pip install "scikit-learn<1.9" diffprivlib "opendp[scikit-learn]" && /tmp/anchors/bin/pip install -e .
    OPENBLAS_NUM_THREADS=1 nice /tmp/anchors/bin/python benchmarks/run.py --sections libraries,bingham --merge
and to measure the explorers' redraws alone (a merged section's date and load average are stated in the table):
    OPENBLAS_NUM_THREADS=1 nice .venv/bin/python benchmarks/run.py --sections explorers --merge
"""
import argparse
import json
import os
import sys
from pathlib import Path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="full", choices=("full", "small"))
    ap.add_argument("--blas-threads", type=int, default=1)
    ap.add_argument("--sections", default="kendall,local,fantope,libraries,dask,bingham,explorers")
    ap.add_argument("--merge", action="store_true",
                    help="merge the sections run into the existing results.json/.md instead of replacing them")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results.md"))
    args = ap.parse_args(argv)
    # the Dask workers inherit these; the client's BLAS is limited with threadpoolctl in run_all
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(args.blas_threads))
    from suite import run_all, results_markdown, merge_results
    out = Path(args.out)
    if args.merge and not out.with_suffix(".json").exists():
        ap.error(f"--merge: no {out.with_suffix('.json')} to merge into")
    res = run_all(args.size, blas_threads=args.blas_threads, sections=tuple(args.sections.split(",")),
                  log=lambda m: print(m, file=sys.stderr, flush=True))
    if args.merge: res = merge_results(json.loads(out.with_suffix(".json").read_text()), res)
    out.write_text(results_markdown(res))
    out.with_suffix(".json").write_text(json.dumps(res, indent=1, default=str))
    print(f"wrote {out} and {out.with_suffix('.json')}", file=sys.stderr)


if __name__ == "__main__":
    main()
