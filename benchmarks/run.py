"""Run the benchmarks of dppca_nb and write benchmarks/results.md (and results.json beside it).

Usage: python benchmarks/run.py [--size full|small] [--blas-threads 1] [--sections kendall,local,fantope,libraries,dask]

Every row of the table is a ratio measured side by side in this one run; the BLAS threads are set with
threadpoolctl and stated in the table's header. The functions live in dppca_nb.benchmarks
(nbs/81_benchmarks.ipynb explains each section). The full run takes about 10 minutes on 2 cores.
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
    ap.add_argument("--sections", default="kendall,local,fantope,libraries,dask")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results.md"))
    args = ap.parse_args(argv)
    # the Dask workers inherit these; the client's BLAS is limited with threadpoolctl in run_all
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(args.blas_threads))
    from dppca_nb.benchmarks import run_all, results_markdown
    res = run_all(args.size, blas_threads=args.blas_threads, sections=tuple(args.sections.split(",")),
                  log=lambda m: print(m, file=sys.stderr, flush=True))
    out = Path(args.out)
    out.write_text(results_markdown(res))
    out.with_suffix(".json").write_text(json.dumps(res, indent=1, default=str))
    print(f"wrote {out} and {out.with_suffix('.json')}", file=sys.stderr)


if __name__ == "__main__":
    main()
