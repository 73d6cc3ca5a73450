"""Execute notebooks in place, the way the test suite runs them, and keep their outputs for readers.

Usage: python tools/run_nb.py nbs/02_data/00_datasets.ipynb [more.ipynb ...] [--flags slow]

Cells flagged with a tst_flags flag (e.g. `slow`) and `#| eval: false` cells are skipped unless the
flag is passed with --flags; their previous outputs are kept. Then runs nbdev_clean on each file.
"""
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")


def run(fn: Path, force=()):
    from execnb.nbio import read_nb, write_nb
    from execnb.shell import CaptureShell
    from nbdev.process import NBProcessor
    from nbdev.config import get_config
    from fastcore.xtras import working_directory
    flags = set(get_config().tst_flags.split()) - set(force)
    proc = NBProcessor(fn, process=True)      # parses directives into cell.directives_
    nb = proc.nb

    def skip(cell):
        if cell.cell_type != "code": return True
        d = getattr(cell, "directives_", {}) or {}
        if d.get("eval:", [""])[0].lower() == "false": return True
        return bool(flags & d.keys())

    raw = read_nb(fn)
    shell = CaptureShell(fn)
    with working_directory(fn.parent):
        shell.run_all(nb, exc_stop=True, preproc=skip)
    # copy outputs back onto the unprocessed notebook (NBProcessor may have altered sources)
    for c_raw, c_run in zip(raw.cells, nb.cells):
        if c_raw.cell_type == "code" and not skip(c_run):
            c_raw["outputs"] = c_run.get("outputs", [])
            c_raw["execution_count"] = c_run.get("execution_count")
    root = subprocess.run(["git", "-C", str(fn.parent), "rev-parse", "--show-toplevel"], capture_output=True,
                          text=True).stdout.strip()
    if root: scrub_paths(raw, root)
    write_nb(raw, fn)


def scrub_paths(nb, root: str) -> None:
    "Outputs name the package's files from the repository root: no checkout's absolute path reaches a reader."
    pre = root.rstrip("/") + "/"
    for c in nb["cells"]:
        for o in c.get("outputs", []) or []:
            if "text" in o:
                t = o["text"]
                o["text"] = [x.replace(pre, "") for x in t] if isinstance(t, list) else t.replace(pre, "")


if __name__ == "__main__":
    args, force = [], []
    it = iter(sys.argv[1:])
    for a in it:
        if a == "--flags": force += next(it).split()
        else: args.append(a)
    if len(args) > 1:        # one process per notebook: registries and caches never carry from one into the next
        flags = ["--flags", " ".join(force)] if force else []
        for a in args: subprocess.run([sys.executable, __file__, a, *flags], check=True)
        sys.exit(0)
    for a in args:
        fn = Path(a).resolve()
        print(f"running {fn.name}", flush=True)
        run(fn, force)
        subprocess.run([str(Path(sys.executable).parent / "nbdev_clean"), "--fname", str(fn)], check=True)
