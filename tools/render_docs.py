"""Render the notebooks to a static documentation site that works offline: `python tools/render_docs.py --out site`.

What it writes under OUT:

* `index.html`: the rendered `nbs/index.ipynb` (the learning path), followed by the contents: every chapter
  folder (each with its own `CHAPTER/index.html`) and every notebook page, and the API reference;
* one page per notebook, at the notebook's own relative path (`03_privacy/00_mechanisms.html`), as nbdev shows
  a notebook in its docs: cells marked `#| hide` (or `#| include: false`) are left out, directive lines
  (`#| export`, `#| default_exp`, ...) and the fastcore test imports are removed, `#| echo: false` shows only the
  output, no `In [ ]` prompts; exported code (the library) and the tests (they teach) are shown; a code cell over
  `FOLD_LINES` (25) lines is folded (a `<details>` whose summary reads "code, N lines": one click opens it);
  outputs exactly as committed (nothing is executed);
* `api.html`: every public name (`__all__`) of every module of the installed `dppca_nb`, with its signature and
  its docstring (numpydoc sections as lists), grouped by layer;
* `_static/`: the style sheet and a copy of MathJax 2 (only the files the pages need), which every page loads by
  a relative path, so formulas are typeset without a network.

Links: markdown links to notebooks (`../04_algorithms/01_local.ipynb`) and backticked notebook names
(`04_algorithms/01_local`, `01_local.ipynb`) become links to the pages; backticked module paths and public names
(`dppca_nb.privacy.accounting`, `gaussian_sigma`) link into the API reference. A relative link whose target is not
in the site is turned into plain text, so that every link of the site resolves.

MathJax comes from the PyPI package `jupyter-server-mathjax` (the [docs] extra) or Debian's `libjs-mathjax`, or
from `--mathjax DIR` (a MathJax 2 folder with MathJax.js). Where Quarto is installed, `nbdev_docs` remains the
way to build nbdev's own site; this script is for a checkout without Quarto and for reading offline.

    python tools/render_docs.py --out site                       # every notebook, the index and the API page
    python tools/render_docs.py --out site --only index 03_privacy/00_mechanisms
"""
from __future__ import annotations

import argparse
import html
import importlib
import inspect
import json
import os
import pkgutil
import re
import shutil
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"
PACKAGE = "dppca_nb"
LAYERS = ["core", "backends", "data", "privacy", "algorithms", "theory", "estimators", "preprocessing",
          "experiments", "teach", "cli"]             # as tests/test_layers.py: lowest first
LAYER_OF = {"bounds": "theory"}        # top-level alias modules -> their layer
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full"


class DocsError(ValueError):
    "A docs build that cannot go on (no such notebook, no MathJax); the command line prints it and exits with 2."

# -------------------------------------------------------------------------------------------- notebooks


def notebooks(nbs: Path = NBS) -> list[Path]:
    "The notebooks of the site, in reading order (the same selection as tests/test_notebooks.py)."
    out = []
    for p in sorted(nbs.rglob("*.ipynb")):
        rel = p.relative_to(nbs)
        if any(part.startswith(("_", ".")) for part in rel.parts) or ".ipynb_checkpoints" in rel.parts:
            continue
        out.append(p)
    return out


_DIRECTIVE = re.compile(r"^\s*#\s?\|\s*(.*?)\s*$")
_TEST_IMPORT = re.compile(r"^\s*(from\s+fastcore\.test\s+import\b.*|import\s+fastcore\.test\b.*)$")


def split_directives(source: str) -> tuple[dict, str]:
    """The nbdev directives of a cell (`{"export": [], "eval:": ["false"], ...}`) and its source without them.

    Every `#| ...` line is removed, wherever it is (nbdev reads them at the top of a cell)."""
    directives, keep = {}, []
    for line in source.splitlines():
        m = _DIRECTIVE.match(line)
        if m:
            words = m.group(1).split()
            if words: directives[words[0]] = words[1:]
        else:
            keep.append(line)
    return directives, "\n".join(keep).strip("\n")


def _false(directives, key):
    return directives.get(key, [""])[0].lower() == "false" if key in directives else False


@dataclass
class Cell:
    kind: str                  # "markdown" or "code"
    source: str                # shown source ("" when the input is hidden)
    outputs: list = field(default_factory=list)
    exported_to: str | None = None


def visible_cells(nb: dict) -> tuple[list[Cell], str | None]:
    """The cells a reader sees, as nbdev shows them in its docs, and the module the notebook exports to.

    Left out: cells marked `#| hide` or `#| include: false`, cells left empty once the directive lines and the
    fastcore test imports are removed. `#| echo: false` keeps only the outputs, `#| output: false` only the code."""
    default_exp, cells = None, []
    for c in nb["cells"]:
        src = "".join(c.get("source", ""))
        d, body = split_directives(src)
        if "default_exp" in d and d["default_exp"]:
            default_exp = d["default_exp"][0]
        if "hide" in d or _false(d, "include:"):
            continue
        if c["cell_type"] == "markdown":
            if body.strip(): cells.append(Cell("markdown", body))
            continue
        if c["cell_type"] != "code":
            continue
        body = "\n".join(l for l in body.splitlines() if not _TEST_IMPORT.match(l)).strip("\n")
        outputs = [] if _false(d, "output:") else list(c.get("outputs", []))
        if _false(d, "echo:"): body = ""
        if not body.strip() and not outputs:
            continue
        exported = None
        if {"export", "exports", "exporti"} & d.keys():
            exported = (d["export"][0] if d.get("export") else default_exp)
        cells.append(Cell("code", body, outputs, exported))
    return cells, default_exp


def notebook_title(nb: dict, fallback: str) -> tuple[str, str]:
    "The first `# ` heading of the notebook and its `> summary` line (nbdev's title and description)."
    for c in nb["cells"]:
        if c["cell_type"] != "markdown": continue
        lines = "".join(c["source"]).splitlines()
        for i, l in enumerate(lines):
            if l.startswith("# "):
                summary = next((s[1:].strip() for s in lines[i + 1:] if s.startswith(">")), "")
                return l[2:].strip(), summary
    return fallback, ""

# -------------------------------------------------------------------------------------------- HTML pieces


def markdown(text: str) -> str:
    "Markdown to HTML with the math left for MathJax (nbconvert's mistune renderer protects `$...$`)."
    from nbconvert.filters.markdown_mistune import markdown2html_mistune
    return markdown2html_mistune(text)


def highlight(code: str) -> str:
    from pygments import highlight as _hl
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer
    return _hl(code, PythonLexer(), HtmlFormatter(cssclass="highlight", nowrap=False))


def _ansi(text: str) -> str:
    from nbconvert.filters.ansi import ansi2html
    return ansi2html(text)


def _text(data) -> str:
    return "".join(data) if isinstance(data, list) else str(data)


def render_output(out: dict) -> str:
    "One committed output as HTML: the richest format the page can show without a kernel."
    t = out.get("output_type")
    if t == "stream":
        cls = "stderr" if out.get("name") == "stderr" else "stdout"
        return f'<pre class="output {cls}">{_ansi(_text(out.get("text", "")))}</pre>'
    if t == "error":
        return f'<pre class="output error">{_ansi(chr(10).join(out.get("traceback", [])))}</pre>'
    data = out.get("data", {})
    if "application/vnd.jupyter.widget-view+json" in data:
        note = ('<p class="widget-note">An interactive widget: run the notebook in Jupyter, or <code>dppca app</code>, '
                'to use it.</p>')
        if "image/png" in data: return note + f'<img class="output" alt="widget" src="data:image/png;base64,{_text(data["image/png"]).strip()}">'
        return note
    if "text/html" in data:
        return f'<div class="output html">{_text(data["text/html"])}</div>'
    if "image/svg+xml" in data:
        return f'<div class="output svg">{_text(data["image/svg+xml"])}</div>'
    for mime in ("image/png", "image/jpeg", "image/gif"):
        if mime in data:
            return f'<img class="output" alt="figure" src="data:{mime};base64,{_text(data[mime]).strip()}">'
    if "text/markdown" in data:
        return f'<div class="output markdown">{markdown(_text(data["text/markdown"]))}</div>'
    if "text/latex" in data:
        return f'<div class="output latex">{html.escape(_text(data["text/latex"]))}</div>'
    if "text/plain" in data:
        return f'<pre class="output">{_ansi(_text(data["text/plain"]))}</pre>'
    return ""


FOLD_LINES = 25                        # a code cell longer than this is folded: a reader opens it with a click


def fold(code_html: str, n_lines: int, exported: bool) -> str:
    "The highlighted source of a cell of `n_lines` lines, folded into a `<details>` when it is over `FOLD_LINES`."
    if n_lines <= FOLD_LINES: return code_html
    what = "exported code" if exported else "code"
    return f'<details class="fold"><summary>{what}, {n_lines} lines</summary>{code_html}</details>'


def render_cells(cells: list[Cell]) -> str:
    parts = []
    for c in cells:
        if c.kind == "markdown":
            parts.append(f'<div class="md">{markdown(c.source)}</div>')
            continue
        inner = []
        if c.source.strip():
            tag = (f'<div class="exported">exported to <code>{PACKAGE}.{html.escape(c.exported_to)}</code></div>'
                   if c.exported_to else "")
            code = fold(highlight(c.source), len(c.source.splitlines()), bool(c.exported_to))
            inner.append(f'<div class="input{" export" if c.exported_to else ""}">{tag}{code}</div>')
        inner += [render_output(o) for o in c.outputs]
        parts.append('<div class="cell">' + "".join(inner) + "</div>")
    return "\n".join(parts)


STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; line-height: 1.55;
       color: #1f2328; max-width: 56rem; margin: 0 auto; padding: 0 1.2rem 3rem; }
header.site { display: flex; gap: 1.2rem; align-items: baseline; border-bottom: 1px solid #d0d7de; padding: .7rem 0;
       margin-bottom: 1rem; flex-wrap: wrap; }
header.site a.home { font-weight: 700; font-size: 1.15rem; }
a { color: #0b5cad; text-decoration: none; } a:hover { text-decoration: underline; }
h1 { font-size: 2rem; margin: 1rem 0 .4rem; } h2 { border-bottom: 1px solid #eaecef; padding-bottom: .2rem; }
blockquote { margin: .3rem 0 1rem; padding: .1rem 1rem; color: #57606a; border-left: .25rem solid #d0d7de; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .88em;
       background: #f2f4f7; padding: .08em .3em; border-radius: 4px; }
pre code { background: none; padding: 0; }
a code { color: #0b5cad; background: #eef4fb; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .93rem; display: block; overflow-x: auto; }
th, td { border: 1px solid #d0d7de; padding: .3rem .6rem; vertical-align: top; } th { background: #f6f8fa; }
.cell { margin: .8rem 0; }
.input .highlight, .md .highlight { background: #f6f8fa; border: 1px solid #e1e4e8; border-radius: 6px; overflow-x: auto; }
.input .highlight pre, .md .highlight pre { margin: 0; padding: .6rem .8rem; font-size: .85rem; line-height: 1.45; }
.input.export .highlight { border-left: 4px solid #6f9fd8; }
details.fold > summary { cursor: pointer; color: #57606a; font-size: .85rem; padding: .3rem .6rem;
       background: #f6f8fa; border: 1px solid #e1e4e8; border-radius: 6px; }
details.fold[open] > summary { border-radius: 6px 6px 0 0; border-bottom: none; }
.exported { font-size: .75rem; color: #57606a; margin-bottom: .15rem; }
.exported code { font-size: .75rem; }
pre.output { margin: .3rem 0 0; padding: .4rem .8rem; border-left: 3px solid #d0d7de; font-size: .83rem;
       overflow-x: auto; white-space: pre; }
pre.output.stderr { background: #fff8e6; } pre.output.error { background: #fde8e8; }
img.output { max-width: 100%; margin: .3rem 0; display: block; }
div.output { margin: .3rem 0; overflow-x: auto; }
.widget-note { color: #57606a; font-style: italic; }
nav.pager { display: flex; justify-content: space-between; gap: 1rem; border-top: 1px solid #d0d7de;
       margin-top: 2.5rem; padding-top: .8rem; }
ul.contents li { margin: .15rem 0; } ul.contents small, .summary { color: #57606a; }
.api-item { margin: 1.4rem 0; padding-top: .4rem; border-top: 1px solid #eaecef; }
.api-sig { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9rem;
       background: #f6f8fa; padding: .35rem .6rem; border-radius: 6px; white-space: pre-wrap; }
.api-sig .name { font-weight: 700; color: #0b3d91; } .api-kind { color: #57606a; font-size: .8rem; }
.api-section { font-weight: 600; margin: .6rem 0 .2rem; }
dl.params dt { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .88rem; }
dl.params dt .type { color: #57606a; } dl.params dd { margin: 0 0 .5rem 1.6rem; }
dl.params dd p { margin: .1rem 0; }
.methods { margin-left: 1.2rem; }
a.anchor-link { visibility: hidden; margin-left: .3rem; font-size: .8em; color: #8c959f; }
h1:hover a.anchor-link, h2:hover a.anchor-link, h3:hover a.anchor-link, h4:hover a.anchor-link { visibility: visible; }
"""


def _mathjax_head(rel: str) -> str:
    "The MathJax 2 configuration and script tag of a page whose way up to the site root is `rel`."
    cfg = {
        "tex2jax": {"inlineMath": [["$", "$"], ["\\(", "\\)"]], "displayMath": [["$$", "$$"], ["\\[", "\\]"]],
                    "processEscapes": True, "processEnvironments": True},
        "TeX": {"equationNumbers": {"autoNumber": "none"}},
        # only the STIX web fonts are bundled: never look for TeX fonts (local, web or image)
        "HTML-CSS": {"availableFonts": [], "preferredFont": None, "webFont": "STIX-Web", "imageFont": None},
        "showMathMenu": False, "messageStyle": "none", "menuSettings": {"zoom": "None"},
        "MathMenu": {"showRenderer": False}, "showProcessingMessages": False,
    }
    return ('<script type="text/x-mathjax-config">\nMathJax.Hub.Config(' + json.dumps(cfg) + ');\n'
            'MathJax.Hub.Queue(function () { document.documentElement.setAttribute("data-mathjax", "done"); });\n'
            '</script>\n'
            f'<script src="{rel}_static/mathjax/MathJax.js?config={MATHJAX_CONFIG}"></script>')


def page(title: str, body: str, rel: str, crumbs: list[tuple[str, str]] = (), pager: str = "") -> str:
    "A whole HTML page; `rel` is the way up to the site root ('' or '../'), `crumbs` (text, href) after Home."
    nav = " ".join(f'<span>/ <a href="{h}">{html.escape(t)}</a></span>' for t, h in crumbs)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)} - {PACKAGE}</title>
<link rel="stylesheet" href="{rel}_static/style.css">
{_mathjax_head(rel)}
</head><body>
<header class="site"><a class="home" href="{rel}index.html">{PACKAGE}</a> {nav}
<span style="flex:1"></span><a href="{rel}index.html#contents">Contents</a> <a href="{rel}api.html">API reference</a></header>
<main>
{body}
</main>
{pager}
</body></html>
"""

# -------------------------------------------------------------------------------------------- links


class Links:
    "Resolves notebook names and API names to site paths (relative to the site root)."

    def __init__(self, pages: dict[str, str], api_names: dict[str, str], api_modules: set[str], api_anchors=()):
        self.pages = pages                    # "03_privacy/00_mechanisms" -> "03_privacy/00_mechanisms.html"
        self.stems = {}
        for key in pages:
            self.stems.setdefault(Path(key).name, []).append(key)
        self.api_names = api_names            # "gaussian_sigma" -> "api.html#dppca_nb.privacy.mechanisms.gaussian_sigma"
        self.api_modules = api_modules        # {"dppca_nb.privacy.mechanisms", ...}
        self.anchors = set(api_anchors or ())  # every "api.html#dppca_nb.mod.name" of the API page

    def notebook(self, ref: str, here: str) -> str | None:
        "Site path of the page for a notebook reference seen on the page of notebook `here` (a key), or None."
        ref = ref.strip().split("#")[0]
        if ref.startswith("nbs/"): ref = ref[4:]
        if ref.endswith(".ipynb"): ref = ref[:-6]
        elif ref.endswith(".html"): ref = ref[:-5]
        if not ref or "://" in ref or not re.fullmatch(r"[\w./-]+", ref): return None
        here_dir = Path(here).parent
        for cand in (os.path.normpath(str(here_dir / ref)), os.path.normpath(ref)):
            cand = cand.replace(os.sep, "/")
            if cand in self.pages: return self.pages[cand]
        keys = self.stems.get(Path(ref).name, [])
        if "/" not in ref and len(keys) == 1 and re.match(r"\d\d_", ref) is None and ref != "index":
            return self.pages[keys[0]]
        return None

    def api(self, text: str) -> str | None:
        "The API anchor of a backticked module (`dppca_nb.privacy.accounting`), dotted name or unique public name."
        name = text.strip()
        if name.endswith("()"): name = name[:-2]
        if name in self.api_modules: return f"api.html#{name}"
        if f"api.html#{name}" in self.anchors: return f"api.html#{name}"
        return self.api_names.get(name)


def _relpath(target: str, here_dir: str) -> str:
    return os.path.relpath(target, here_dir or ".").replace(os.sep, "/")


def rewrite_links(body: str, here: str, links: Links, out: Path, here_src_dir: Path | None = None) -> str:
    """Point the links of a page (site key `here`) at the site: notebooks to pages, backticked names to pages or
    the API; copy local images beside the page; unresolvable relative links become plain text."""
    from bs4 import BeautifulSoup
    soup = BeautifulSoup(body, "html.parser")
    here_dir = str(Path(here).parent) if "/" in here else ""
    for a in soup.find_all("a", href=True):
        href = a["href"]
        if re.match(r"^[a-z][a-z0-9+.-]*:", href, re.I) or href.startswith("#"):
            continue                                               # external (http:, mailto:) or on this page
        target = links.notebook(href, here)
        if target is not None:
            frag = href.split("#", 1)[1] if "#" in href else ""
            a["href"] = _relpath(target, here_dir) + (f"#{frag}" if frag else "")
        elif not (out / here_dir / href.split("#")[0]).is_file():
            a.unwrap()                                             # nowhere to go offline: keep the text only
    for code in soup.find_all("code"):
        if code.find_parent(["pre", "a"]) is not None: continue
        text = code.get_text()
        target = links.notebook(text, here) if re.search(r"\d\d_\w+|\.ipynb$", text) else None
        target = target or links.api(text)
        if target is None: continue
        anchor, _, frag = target.partition("#")
        a = soup.new_tag("a", href=_relpath(anchor, here_dir) + (f"#{frag}" if frag else ""))
        code.wrap(a)
    for img in soup.find_all("img", src=True):
        src = img["src"]
        if src.startswith("data:") or re.match(r"^[a-z][a-z0-9+.-]*:", src, re.I) or here_src_dir is None: continue
        f = (here_src_dir / src).resolve()
        dest = (out / here_dir / src).resolve()
        if f.is_file() and out.resolve() in dest.parents:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dest)
    return str(soup)

# -------------------------------------------------------------------------------------------- API reference


class _Ann:
    "An annotation shown as written (modules use `from __future__ import annotations`: they are strings)."
    def __init__(self, text): self.text = text
    def __repr__(self): return self.text


def signature(obj) -> str:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    def fix(a): return a if a is inspect.Parameter.empty else _Ann(a if isinstance(a, str) else inspect.formatannotation(a))
    params = [p.replace(annotation=fix(p.annotation)) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=fix(sig.return_annotation)))


_SECTIONS = {"Parameters", "Returns", "Yields", "Raises", "Warns", "Attributes", "Other Parameters", "Notes",
             "Examples", "See Also", "References", "Methods", "Warnings"}


def parse_numpydoc(doc: str) -> list[tuple[str, object]]:
    """Split a numpydoc docstring into [(section, content)]: ("", text) for the summary and free text,
    ("Parameters", [(name, type, description), ...]) for the list sections, (name, text) for the others."""
    lines = inspect.cleandoc(doc or "").splitlines()
    out, cur, buf, i = [], "", [], 0
    def flush():
        text = "\n".join(buf).strip("\n")
        if cur in {"Parameters", "Returns", "Yields", "Raises", "Warns", "Attributes", "Other Parameters"}:
            out.append((cur, _items(text)))
        elif text.strip():
            out.append((cur, text))
    while i < len(lines):
        l = lines[i]
        if (l.strip() in _SECTIONS and i + 1 < len(lines) and re.fullmatch(r"\s*-{3,}\s*", lines[i + 1])):
            flush(); cur, buf, i = l.strip(), [], i + 2
            continue
        buf.append(l); i += 1
    flush()
    return out


def _items(text: str) -> list[tuple[str, str, str]]:
    items = []
    for l in text.splitlines():
        if l and not l[0].isspace():
            name, _, typ = l.partition(" : ") if " : " in l else (l.partition(":") if re.match(r"^\w+\s*:", l) else (l, "", ""))
            items.append([name.strip(), typ.strip(), []])
        elif items:
            items[-1][2].append(l)
        elif l.strip():
            items.append(["", "", [l]])
    return [(n, t, textwrap.dedent("\n".join(d)).strip()) for n, t, d in items]


def render_doc(doc: str) -> str:
    parts = []
    for sec, content in parse_numpydoc(doc):
        if sec: parts.append(f'<div class="api-section">{html.escape(sec)}</div>')
        if isinstance(content, list):
            dl = []
            for name, typ, desc in content:
                if not typ and sec in {"Returns", "Yields", "Raises", "Warns"}: name, typ = "", name   # a type alone
                head = f"<code>{html.escape(name)}</code>" if name else ""
                if typ: head += f' : <span class="type">{html.escape(typ)}</span>'
                dl.append(f"<dt>{head}</dt><dd>{markdown(desc) if desc else ''}</dd>")
            parts.append('<dl class="params">' + "".join(dl) + "</dl>")
        elif sec == "Examples":
            parts.append(highlight(content))
        else:
            parts.append(markdown(content))
    return "\n".join(parts)


def _module_notebook(mod) -> str | None:
    "The notebook (site key) a module was exported from, read from nbdev's header line."
    try:
        head = Path(mod.__file__).read_text(encoding="utf-8").splitlines()[:4]
    except (OSError, TypeError):
        return None
    for l in head:
        m = re.search(r"File to edit: (?:\.\./)+nbs/(.+?)\.ipynb", l)
        if m: return m.group(1)
    return None


def public_modules(package: str = PACKAGE):
    "Every importable public module of the package with a non-empty `__all__`, as (name, module, layer)."
    pkg = importlib.import_module(package)
    out = [(package, pkg, "top level")] if getattr(pkg, "__all__", None) else []
    for info in pkgutil.walk_packages(pkg.__path__, package + "."):
        name = info.name
        if any(part.startswith("_") for part in name.split(".")[1:]): continue
        mod = importlib.import_module(name)
        if not getattr(mod, "__all__", None): continue
        first = name.split(".")[1]
        layer = LAYER_OF.get(first, first)
        out.append((name, mod, layer if layer in LAYERS else "other"))
    order = {l: i for i, l in enumerate(["top level"] + LAYERS + ["other"])}
    return sorted(out, key=lambda t: (order[t[2]], t[0]))


def api_reference(package: str = PACKAGE):
    """The API page's body, a map from each public name to its anchor (names defined in more than one module are
    left out of the map), the set of module names, a map module -> notebook key, and the set of anchors."""
    mods = public_modules(package)
    where = {}                             # id(obj) -> anchor of its home module entry
    for name, mod, _ in mods:
        for n in mod.__all__:
            obj = getattr(mod, n, None)
            home = getattr(obj, "__module__", None)
            if (home == name or not callable(obj)) and id(obj) not in where:
                where[id(obj)] = f"{name}.{n}"
    names, seen_twice = {}, set()
    sections, toc = {}, {}
    nb_of = {}
    for name, mod, layer in mods:
        nb_key = _module_notebook(mod)
        if nb_key: nb_of[name] = nb_key
        items = []
        for n in mod.__all__:
            obj = getattr(mod, n, None)
            anchor = f"{name}.{n}"
            home = where.get(id(obj), anchor)
            if home != anchor:             # re-exported (an alias module): point at the definition
                items.append(f'<div class="api-item" id="{anchor}"><code>{n}</code>: the same object as '
                             f'<a href="#{home}"><code>{home}</code></a>.</div>')
                continue
            if n in names and names[n] != f"api.html#{anchor}": seen_twice.add(n)
            names.setdefault(n, f"api.html#{anchor}")
            items.append(_api_item(n, obj, anchor))
        src = (f' <small>(explained in <a href="{nb_key}.html">{nb_key}</a>)</small>' if nb_key else "")
        summary = markdown((mod.__doc__ or "").strip()) if mod.__doc__ else ""
        sections.setdefault(layer, []).append(
            f'<section id="{name}"><h3><code>{name}</code>{src}</h3>{summary}' + "\n".join(items) + "</section>")
        toc.setdefault(layer, []).append(f'<a href="#{name}"><code>{name}</code></a>')
    for n in seen_twice: names.pop(n, None)
    anchors = {f"api.html#{m[0]}.{n}" for m in mods for n in m[1].__all__}
    body = ['<h1>API reference</h1>',
            f'<blockquote>Every public name (<code>__all__</code>) of every module of <code>{package}</code>, '
            'with its signature and docstring, grouped by layer (lowest first: a layer imports only from the '
            'layers above it in this list).</blockquote>',
            '<ul class="contents">' + "".join(f'<li><a href="#layer-{l.replace(" ", "-")}">{l}</a>: {", ".join(toc[l])}</li>'
                                              for l in ["top level"] + LAYERS + ["other"] if l in toc) + "</ul>"]
    for l in ["top level"] + LAYERS + ["other"]:
        if l in sections:
            body.append(f'<h2 id="layer-{l.replace(" ", "-")}">{l}</h2>' + "\n".join(sections[l]))
    return "\n".join(body), names, {m[0] for m in mods}, nb_of, anchors


def _api_item(n: str, obj, anchor: str) -> str:
    if inspect.isclass(obj):
        kind, sig = "class", signature(obj)
        bases = [b for b in obj.__bases__ if b is not object]
        base = (f'<div class="api-kind">bases: {", ".join(html.escape(b.__qualname__) for b in bases)}</div>'
                if bases else "")
        methods = []
        for m, v in obj.__dict__.items():
            if m.startswith("_") or not (inspect.isfunction(v) or isinstance(v, (property, classmethod, staticmethod))):
                continue
            f = v.fget if isinstance(v, property) else getattr(v, "__func__", v)
            msig = "" if isinstance(v, property) else html.escape(signature(getattr(obj, m)))
            methods.append(f'<div class="api-item" id="{anchor}.{m}"><div class="api-sig"><span class="name">{m}</span>'
                           f'{msig}</div>{render_doc(f.__doc__ or "")}</div>')
        doc = render_doc(obj.__doc__ or "") + base + (f'<div class="methods">{"".join(methods)}</div>' if methods else "")
    elif callable(obj):
        kind, sig = "function", signature(obj)
        doc = render_doc(getattr(obj, "__doc__", "") or "")
    else:
        kind = "value"
        r = repr(obj)
        sig = " = " + (r if len(r) <= 300 else r[:300] + " ...")
        doc = ""
    return (f'<div class="api-item" id="{anchor}"><div class="api-sig"><span class="api-kind">{kind}</span> '
            f'<span class="name">{html.escape(n)}</span>{html.escape(sig)}</div>{doc}</div>')

# -------------------------------------------------------------------------------------------- MathJax


def mathjax_source(explicit: str | Path | None = None) -> Path:
    "A MathJax 2 folder (with MathJax.js and the combined config): --mathjax, the PyPI package, or Debian's."
    cands = [Path(explicit)] if explicit else []
    try:
        import jupyter_server_mathjax
        cands.append(Path(jupyter_server_mathjax.__file__).parent / "static")
    except ImportError:
        pass
    cands += [Path("/usr/share/javascript/mathjax"), Path("/usr/share/mathjax")]
    for c in cands:
        if (c / "MathJax.js").is_file() and (c / "config" / f"{MATHJAX_CONFIG}.js").is_file():
            return c
    raise DocsError("render_docs: no MathJax 2 found; it comes with the [docs] extra (pip install 'dppca_nb[docs]', "
                     "in a checkout pip install -e '.[docs]'), or `apt-get install libjs-mathjax`, or pass --mathjax DIR "
                     "(a folder with MathJax.js)")


# What the pages load: the core, the combined TeX/MathML -> HTML-CSS config, the on-demand parts of the HTML-CSS
# output with the STIX web fonts (the only fonts bundled), the TeX extensions loaded on demand by macros, and the
# accessibility extension the menu settings turn on. Nothing else (localisation, other fonts, SVG) is copied.
MATHJAX_FILES = ["MathJax.js", f"config/{MATHJAX_CONFIG}.js", "LICENSE", "extensions/AssistiveMML.js",
                 "extensions/MathMenu.js", "extensions/MathZoom.js", "extensions/TeX", "jax/output/HTML-CSS",
                 "jax/input/TeX", "jax/element/mml", "fonts/HTML-CSS/STIX-Web/woff"]


def copy_mathjax(dest: Path, source: Path) -> None:
    for rel in MATHJAX_FILES:
        s = source / rel
        if s.is_dir():
            shutil.copytree(s, dest / rel, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.otf", "*.eot", "*.svg"))
        elif s.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(s, dest / rel)

# -------------------------------------------------------------------------------------------- the site


def _key(p: Path, nbs: Path) -> str:
    return p.relative_to(nbs).with_suffix("").as_posix()


def _chapter_title(folder: str) -> str:
    return re.sub(r"^\d+_", "", folder).replace("_", " ")


def render_site(out, only=None, nbs: Path = NBS, mathjax: str | Path | None = None, api: bool = True) -> Path:
    """Render the site into `out` (see the module docstring); `only`: notebook keys or paths to render (the index
    is always rendered). Returns the path of index.html."""
    out = Path(out); out.mkdir(parents=True, exist_ok=True)
    nbs = Path(nbs).resolve()
    all_nbs = notebooks(nbs)
    if only:
        want = []
        for o in only:
            k = str(o).removeprefix("nbs/").removesuffix(".ipynb")
            hit = [p for p in all_nbs if _key(p, nbs) == k or p.resolve() == Path(o).resolve()]
            if not hit: raise DocsError(f"render_docs: --only: no notebook {o!r} under {nbs}")
            want += hit
        chosen = [p for p in all_nbs if p in want or _key(p, nbs) == "index"]
    else:
        chosen = all_nbs
    index_nb = nbs / "index.ipynb"
    if index_nb not in chosen: raise DocsError(f"render_docs: no {index_nb}")
    # static files
    static = out / "_static"
    static.mkdir(exist_ok=True)
    from pygments.formatters import HtmlFormatter
    (static / "style.css").write_text(STYLE + HtmlFormatter().get_style_defs(".highlight"), encoding="utf-8")
    copy_mathjax(static / "mathjax", mathjax_source(mathjax))
    # API first: its names become links on every page
    if api:
        api_body, api_names, api_modules, _, api_anchors = api_reference()
    else:
        api_body, api_names, api_modules, api_anchors = "", {}, set(), set()
    pages = {_key(p, nbs): _key(p, nbs) + ".html" for p in chosen}
    chapters = sorted({k.split("/")[0] for k in pages if "/" in k})
    for ch in chapters: pages.setdefault(ch, f"{ch}/index.html")
    links = Links({k: v for k, v in pages.items() if k not in chapters}, api_names, api_modules, api_anchors)
    loaded = {p: json.loads(p.read_text(encoding="utf-8")) for p in chosen}
    meta = {p: notebook_title(nb, p.stem) for p, nb in loaded.items()}
    order = [p for p in chosen if p != index_nb]
    for i, p in enumerate(order):
        key = _key(p, nbs)
        rel = "../" * key.count("/")
        cells, _ = visible_cells(loaded[p])
        ch = key.split("/")[0] if "/" in key else None
        prev_, next_ = (order[i - 1] if i else None), (order[i + 1] if i + 1 < len(order) else None)
        pager = '<nav class="pager">' + "".join([
            f'<a href="{rel}{_key(prev_, nbs)}.html">&larr; {html.escape(meta[prev_][0])}</a>' if prev_ else "<span></span>",
            f'<a href="{rel}index.html">Home</a>',
            f'<a href="{rel}{_key(next_, nbs)}.html">{html.escape(meta[next_][0])} &rarr;</a>' if next_ else "<span></span>"]) + "</nav>"
        body = rewrite_links(render_cells(cells), key, links, out, p.parent)
        crumbs = [(_chapter_title(ch), f"{rel}{ch}/index.html")] if ch else []
        dest = out / f"{key}.html"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(page(meta[p][0], body, rel, crumbs, pager), encoding="utf-8")
    # chapter pages
    contents = ['<h2 id="contents">Contents</h2>', '<ul class="contents">']
    for ch in chapters:
        items = [p for p in order if _key(p, nbs).startswith(ch + "/")]
        lis = "".join(f'<li><a href="{_key(p, nbs).split("/", 1)[1]}.html">{html.escape(meta[p][0])}</a> '
                      f'<small>{html.escape(meta[p][1])}</small></li>' for p in items)
        ch_body = (f"<h1>{html.escape(_chapter_title(ch))}</h1><p>The notebooks of <code>nbs/{ch}/</code>, "
                   f'in reading order.</p><ul class="contents">{lis}</ul>')
        (out / ch).mkdir(exist_ok=True)
        (out / ch / "index.html").write_text(page(_chapter_title(ch), ch_body, "../"), encoding="utf-8")
        sub = "".join(f'<li><a href="{_key(p, nbs)}.html">{html.escape(meta[p][0])}</a></li>' for p in items)
        contents.append(f'<li><a href="{ch}/index.html"><strong>{html.escape(ch)}</strong></a><ul>{sub}</ul></li>')
    top = [p for p in order if "/" not in _key(p, nbs)]
    contents += [f'<li><a href="{_key(p, nbs)}.html">{html.escape(meta[p][0])}</a></li>' for p in top]
    if api: contents.append('<li><a href="api.html"><strong>API reference</strong></a>: every public name, '
                            'with its signature and docstring, by layer</li>')
    contents.append("</ul>")
    cells, _ = visible_cells(loaded[index_nb])
    body = rewrite_links(render_cells(cells) + "\n" + "\n".join(contents), "index", links, out, nbs)
    (out / "index.html").write_text(page(meta[index_nb][0], body, ""), encoding="utf-8")
    if api:
        body = rewrite_links(api_body, "api", links, out)
        (out / "api.html").write_text(page("API reference", body, ""), encoding="utf-8")
    return out / "index.html"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="render_docs.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="docs_html", metavar="DIR", help="output folder (default docs_html)")
    p.add_argument("--only", nargs="+", metavar="NOTEBOOK",
                   help="render only these notebooks (keys such as 03_privacy/00_mechanisms, or paths); the index always")
    p.add_argument("--mathjax", metavar="DIR", help="a MathJax 2 folder (default: jupyter-server-mathjax's copy)")
    p.add_argument("--no-api", action="store_true", help="skip the API reference page")
    a = p.parse_args(argv)
    try:
        index = render_site(a.out, a.only, mathjax=a.mathjax, api=not a.no_api)
    except DocsError as e:
        print(e, file=sys.stderr)
        return 2
    print(f"Docs: {index}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
