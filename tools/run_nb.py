"""Execute notebooks in place, the way the test suite runs them, and keep their outputs for readers.

Usage: python tools/run_nb.py nbs/02_data/00_datasets.ipynb [more.ipynb ...] [--flags slow]
       python tools/run_nb.py --shrink-only nbs/**/*.ipynb   (palette PNGs, no run)

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
    shrink_images(raw)
    write_nb(raw, fn)


def shrink_png(data: bytes) -> bytes:
    """A figure's PNG as a 256-colour palette image, on white, without dithering: a third of the bytes of
    matplotlib's RGBA, the same picture to the eye (a figure has few colours). A palette PNG is returned as it is."""
    import io
    from PIL import Image
    im = Image.open(io.BytesIO(data))
    if im.mode == "P": return data
    im = im.convert("RGBA")
    bg = Image.new("RGB", im.size, "white"); bg.paste(im, mask=im.getchannel("A"))
    out = io.BytesIO()
    bg.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(out, format="PNG", optimize=True)
    return out.getvalue()


def shrink_images(nb) -> int:
    "Every PNG output of the notebook through `shrink_png`; returns how many changed."
    import base64
    changed = 0
    for c in nb["cells"]:
        for o in c.get("outputs", []) or []:
            d = o.get("data", {})
            if "image/png" not in d: continue
            raw = base64.b64decode(d["image/png"] if isinstance(d["image/png"], str) else "".join(d["image/png"]))
            new = shrink_png(raw)
            if new != raw: d["image/png"] = base64.b64encode(new).decode("ascii"); changed += 1
    return changed


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
    if args and args[0] == "--shrink-only":    # shrink the figures of committed notebooks without running them
        import json
        for a in args[1:]:
            nb = json.loads(Path(a).read_text(encoding="utf-8"))
            if shrink_images(nb):
                Path(a).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
                subprocess.run([str(Path(sys.executable).parent / "nbdev_clean"), "--fname", a], check=True)
        sys.exit(0)
    if len(args) > 1:        # one process per notebook: registries and caches never carry from one into the next
        flags = ["--flags", " ".join(force)] if force else []
        for a in args: subprocess.run([sys.executable, __file__, a, *flags], check=True)
        sys.exit(0)
    for a in args:
        fn = Path(a).resolve()
        print(f"running {fn.name}", flush=True)
        run(fn, force)
        subprocess.run([str(Path(sys.executable).parent / "nbdev_clean"), "--fname", str(fn)], check=True)
