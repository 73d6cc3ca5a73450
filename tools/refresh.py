"""Regenerate what a new (or changed) mechanism changes, and say what generated file is stale.

Usage:
    python tools/refresh.py --method KEY [--full] [--skip readme,api,tables,studies] [--jobs N]
    python tools/refresh.py --check

`--method KEY` (any name the registry answers to) regenerates, in this order:
  tables   the method's rows of reports/real_tables.csv (tools/real_tables.py for that method only, merged into the
           file: the other methods' rows are kept as they are);
  studies  the mechanism's studies (`experiments.study.studies_of`) in quick mode, merged into reports/quick (their
           tables, figures, claims, bound checks and report sections; `experiments.report.merge_reports`); with
           `--full` also in full mode, merged into reports/full (its figures and report, no raw tables). The other
           studies are not rerun: a new mechanism needs minutes, not the hour of a full report;
  readme   nbs/index.ipynb rerun (its privacy table lists every estimator), then README.md written from it;
  api      nbs/11_api/00_api.ipynb rerun (it prints the registered names that `__all__` does not list).

`--check` runs nothing: it exits 1 when README.md is not what nbs/index.ipynb gives, or its privacy table is not the
estimators', when the API notebook's list of unlisted names is not the registry's, when reports/real_tables.csv lacks
a registered method (or holds one no longer registered), or when reports/quick lacks a registered study or holds one
whose grid or repetitions changed. A study registered since the committed full report is named, and is not a failure
(its full rows come with `--full` or the next full run); a study of the full report whose grid changed is.
"""
import argparse
import csv
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("tables", "studies", "readme", "api")
UNLISTED = "importable from the top, not listed in __all__: "


def tool(name: str):
    "A module of tools/ (tools is not a package)."
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rel(path: Path) -> str:
    "A path as the messages write it: from the repository root where it lies inside it."
    path = Path(path)
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def cli_name(alg) -> str:
    "The method as `dppca fit` writes it in its records and reports/real_tables.csv: the key with dashes."
    return alg.key.replace("_", "-")


# ---- the checks -------------------------------------------------------------------------------------------------

def stale_readme(readme: str, rendered: str, table: str) -> list:
    "README.md against what nbs/index.ipynb renders to, and its privacy table against the estimators' (in any row order)."
    out = []
    if readme != rendered:
        out.append("README.md is not what nbs/index.ipynb gives: python tools/make_readme.py")
    lines, head = readme.splitlines(), table.strip().splitlines()
    listed = []
    if head[0] in lines:                                  # the table's header, then its separator, then a row an estimator
        i = j = lines.index(head[0])
        while j < len(lines) and lines[j].startswith("|"): j += 1
        listed = lines[i + 2:j]
    missing, extra = [r for r in head[2:] if r not in listed], [r for r in listed if r not in head[2:]]
    if missing or extra:
        out.append(f"README.md's privacy table is not the estimators' ({len(missing)} rows missing or changed, {len(extra)} "
                   "no longer an estimator's): python tools/refresh.py --method KEY --skip tables,studies,api")
    return out


def stale_api(api_notebook: Path, unlisted: list) -> list:
    "The API notebook's printed list of registered names not in `__all__`, against the registry's."
    import json
    text = "".join("".join(o.get("text", "")) for c in json.loads(api_notebook.read_text(encoding="utf-8"))["cells"]
                   for o in c.get("outputs", []) if o.get("output_type") == "stream")
    m = re.search(re.escape(UNLISTED) + r"(.*)", text)
    printed = m.group(1).strip() if m else None
    want = ", ".join(unlisted) or "none"
    return [] if printed == want else [f"{_rel(api_notebook)} prints {printed!r}, the registry gives {want!r}: "
                                       "python tools/refresh.py --method KEY --skip tables,studies,readme"]


def stale_tables(path: Path, methods: list) -> list:
    "reports/real_tables.csv against the registered methods (`dppca fit`'s spelling)."
    have = {r["method"] for r in csv.DictReader(path.open())} if path.exists() else set()
    out = [f"{_rel(path)} has no rows of {m}: python tools/refresh.py --method {m} --skip studies,readme,api"
           for m in methods if m not in have]
    out += [f"{_rel(path)} holds rows of {m}, no longer registered: delete them"
            for m in sorted(have - set(methods))]
    return out


def stale_report(folder: Path, want: dict, *, required: bool, tables: bool) -> tuple:
    """A report folder against the registered studies `want` ({name: repetitions in its mode}): (problems, notes).
    `required`: a registered study missing from it is a problem (else a note); `tables`: its raw CSVs are kept too."""
    from dppca_nb.experiments.report import report_studies
    f = folder / "report.md"
    have = report_studies(f.read_text(encoding="utf-8")) if f.exists() else {}
    rel = _rel(folder)
    problems = [f"{rel} holds {n}, no longer a registered study: rerun the report" for n in sorted(set(have) - set(want))]
    problems += [f"{rel}: {n} has {have[n]} repetitions, its grid now {want[n]}: python tools/refresh.py --method KEY"
                 + (" --full" if not tables else "") for n in sorted(set(have) & set(want)) if have[n] != want[n]]
    if tables:
        problems += [f"{rel} lacks {n}.csv" for n in sorted(set(have) & set(want)) if not (folder / f"{n}.csv").exists()]
    missing = sorted(set(want) - set(have))
    if missing and required:
        problems.append(f"{rel} lacks the studies {', '.join(missing)}: python tools/refresh.py --method KEY (or --study NAME)")
    notes = [f"{rel} has no section yet for {', '.join(missing)} (python tools/refresh.py --method KEY --full adds it)"] \
        if missing and not required else []
    return problems, notes


def stale(root: Path = ROOT) -> tuple:
    "(problems, notes): every generated file that is stale, each with the command that regenerates it."
    from dppca_nb.algorithms.registry import algorithms
    from dppca_nb.estimators import privacy_table
    from dppca_nb.experiments.study import load_all_studies
    import dppca_nb
    problems, notes = [], []
    problems += stale_readme((root / "README.md").read_text(encoding="utf-8"), tool("make_readme").render(),
                             privacy_table(markdown=True))
    regs = algorithms().values()
    unlisted = sorted({n for a in regs for n in (a.key, a.estimator) if n} - set(dppca_nb.__all__))
    problems += stale_api(root / "nbs" / "11_api" / "00_api.ipynb", unlisted)
    problems += stale_tables(root / "reports" / "real_tables.csv", [cli_name(a) for a in regs])
    studies = {n: s for n, s in load_all_studies().items() if s.family != "demo"}
    for mode, required in (("quick", True), ("full", False)):
        want = {n: len(s.points(mode)) * s.n_reps(mode) for n, s in studies.items()}
        p, n = stale_report(root / "reports" / mode, want, required=required, tables=mode == "quick")
        problems += p
        notes += n
    return problems, notes


# ---- the refresh ------------------------------------------------------------------------------------------------

def merge_rows(old: list, new: list, method: str) -> list:
    "The rows `old` with those of `method` replaced by `new`: in their place, or after the last row of their table."
    by_table = {}
    for r in new: by_table.setdefault(r["table"], []).append(r)
    out, placed = [], set()
    for i, r in enumerate(old):
        if r["method"] == method:
            if r["table"] not in placed: out += by_table.get(r["table"], []); placed.add(r["table"])
            continue
        out.append(r)
        last_of_table = i + 1 == len(old) or old[i + 1]["table"] != r["table"]
        if last_of_table and r["table"] not in placed: out += by_table.get(r["table"], []); placed.add(r["table"])
    for t, rs in by_table.items():
        if t not in placed: out += rs
    return out


def refresh_tables(alg, path: Path = ROOT / "reports" / "real_tables.csv", log=print):
    "Run tools/real_tables.py for this method only and merge its rows into `path`."
    rt = tool("real_tables")
    name = cli_name(alg)
    new = [{f: rt._num(r.get(f, "")) for f in rt.FIELDS} for r in rt.real_tables(methods=[name])]
    old = list(csv.DictReader(path.open())) if path.exists() else []
    rows = merge_rows(old, new, name)
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, rt.FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    log(f"{_rel(path)}: {len(new)} rows of {name} merged ({len(rows)} rows)")


def refresh_studies(alg=None, *, names=None, full: bool = False, jobs: int = 1, log=print):
    """The mechanism's studies (or the studies `names`) in quick mode merged into reports/quick (and in full mode into
    reports/full)."""
    from dppca_nb.experiments.study import studies_of
    from dppca_nb.experiments.report import merge_reports
    names = sorted(studies_of(alg.key) if names is None else names)
    if not names:
        log(f"no study of {alg.key} (experiments/<module>.py or a study named after it): nothing to merge")
        return
    for mode in ("quick", "full") if full else ("quick",):
        md = merge_reports(ROOT / "reports" / mode, names, mode=mode, jobs=jobs, keep_tables=mode == "quick")
        log(f"{_rel(md)}: {', '.join(names)} merged")


def run_notebook(path: Path, log=print):
    "Rerun a notebook in place in a fresh process (tools/run_nb.py)."
    subprocess.run([sys.executable, str(ROOT / "tools" / "run_nb.py"), str(path)], check=True, cwd=ROOT)
    log(f"{_rel(path)} rerun")


def refresh(method: str, *, full: bool = False, skip=(), jobs: int = 1, log=print):
    "Regenerate what the mechanism `method` changes (see the module's docstring)."
    from dppca_nb.algorithms.registry import get_algorithm
    alg = get_algorithm(method)
    if "tables" not in skip: refresh_tables(alg, log=log)
    if "studies" not in skip: refresh_studies(alg, full=full, jobs=jobs, log=log)
    if "readme" not in skip:
        run_notebook(ROOT / "nbs" / "index.ipynb", log)
        subprocess.run([sys.executable, str(ROOT / "tools" / "make_readme.py")], check=True, cwd=ROOT)
        log("README.md written")
    if "api" not in skip: run_notebook(ROOT / "nbs" / "11_api" / "00_api.ipynb", log)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--method", help="the registry key (or any name) of the mechanism to refresh")
    g.add_argument("--study", help="a study that belongs to no one mechanism (comma-separated names): merge it alone")
    g.add_argument("--check", action="store_true", help="run nothing; exit 1 when something generated is stale")
    ap.add_argument("--full", action="store_true", help="also merge the mechanism's studies into reports/full")
    ap.add_argument("--skip", default="", help=f"comma-separated parts to leave: {', '.join(PARTS)}")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes for the studies")
    a = ap.parse_args(argv)
    skip = [s for s in a.skip.split(",") if s]
    bad = sorted(set(skip) - set(PARTS))
    if bad: ap.error(f"--skip: expected some of {', '.join(PARTS)}, got {', '.join(bad)}")
    if a.check:
        problems, notes = stale()
        for n in notes: print("note:", n)
        for p in problems: print("stale:", p)
        if not problems: print("nothing generated is stale")
        return 1 if problems else 0
    if a.study:
        refresh_studies(names=[n for n in a.study.split(",") if n], full=a.full, jobs=a.jobs)
        return 0
    refresh(a.method, full=a.full, skip=skip, jobs=a.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
