"""Run the benchmarks of dppca_nb and write benchmarks/results.md (and results.json beside it).

Usage: python benchmarks/run.py [--size full|small] [--blas-threads 1]
                                [--sections kendall,kendall_design,local,...] [--merge] [--merge-from FILE.json]
                                [--out results.md]

Every row of the table is a ratio measured side by side in this one run; the BLAS threads are set with
threadpoolctl and stated in the table's header; the explorers' rows (the redraw of each teaching explorer
after a slider moves) have no baseline and give wall-clock and CPU time. The functions live in
benchmarks/suite.py (nbs/10_benchmarks/00_benchmarks.ipynb explains each section). The full run takes about 20 minutes
on 2 cores when the machine is quiet (much longer under other jobs: cvxpy alone takes 4 minutes or more).

--merge runs only the given sections and puts their results into the existing results.json/results.md
in place of the same sections, stating the environment they ran in. Use it to measure IBM diffprivlib
and OpenDP, which need scikit-learn<1.9, from a separate virtual environment:
    python -m venv /tmp/libraries
    /tmp/libraries/bin/pip install "scikit-learn<1.9" diffprivlib "opendp[scikit-learn]" && /tmp/libraries/bin/pip install -e .
    OPENBLAS_NUM_THREADS=1 nice /tmp/libraries/bin/python benchmarks/run.py --sections libraries,bingham --merge
--merge-from FILE.json runs nothing: it merges the sections of a result stored by an earlier run (for example the
libraries measured with --out /tmp/libraries.md from the separate environment, before the main run) into results.json:
    /tmp/libraries/bin/python benchmarks/run.py --sections libraries,bingham --out /tmp/libraries.md
    .venv/bin/python benchmarks/run.py --sections kendall,...          # the main run (without libraries, bingham)
    .venv/bin/python benchmarks/run.py --merge-from /tmp/libraries.json
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
    ap.add_argument("--sections", default=None, help="comma-separated sections (default: all of suite.SECTIONS)")
    ap.add_argument("--merge", action="store_true",
                    help="merge the sections run into the existing results.json/.md instead of replacing them")
    ap.add_argument("--merge-from", default=None, metavar="FILE.json",
                    help="run nothing; merge the sections of this stored result into the existing results.json/.md")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results.md"))
    args = ap.parse_args(argv)
    # the Dask workers inherit these; the client's BLAS is limited with threadpoolctl in run_all
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(args.blas_threads))
    from suite import run_all, results_markdown, merge_results, SECTIONS
    out = Path(args.out)
    if (args.merge or args.merge_from) and not out.with_suffix(".json").exists():
        ap.error(f"--merge: no {out.with_suffix('.json')} to merge into")
    if args.merge_from:
        res = json.loads(Path(args.merge_from).read_text())
    else:
        res = run_all(args.size, blas_threads=args.blas_threads,
                      sections=SECTIONS if args.sections is None else tuple(args.sections.split(",")),
                      log=lambda m: print(m, file=sys.stderr, flush=True))
    if args.merge or args.merge_from: res = merge_results(json.loads(out.with_suffix(".json").read_text()), res)
    out.write_text(results_markdown(res))
    out.with_suffix(".json").write_text(json.dumps(res, indent=1, default=str))
    print(f"wrote {out} and {out.with_suffix('.json')}", file=sys.stderr)


if __name__ == "__main__":
    main()
