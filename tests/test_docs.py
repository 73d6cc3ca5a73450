"""The offline documentation site of tools/render_docs.py: two pages (the index and 03_privacy/00_mechanisms), the
chapter page and the API reference are rendered into a temporary folder once, then checked: clean pages (no nbdev
directives, no prompts, no test imports), the bundled MathJax loaded by a relative path, every link resolving inside
the site, the API reference listing signatures and numpydoc parameters.

With Chromium (the same switch as tests/test_browser.py: DPPCA_BROWSER_TESTS=1, which .ci/run sets when
/usr/bin/chromium exists, or the path in DPPCA_CHROMIUM), both pages are loaded headless from file:// (no network)
and the math must be typeset: MathJax output elements present, no raw `$...$` left in the text.
"""
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import render_docs  # noqa: E402

PAGES = ["index.html", "03_privacy/00_mechanisms.html"]
CHROMIUM = os.environ.get("DPPCA_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    index = render_docs.render_site(out, only=["03_privacy/00_mechanisms"])
    assert index == out / "index.html"
    return out


def _soup(path):
    from bs4 import BeautifulSoup
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _visible_text(path):
    "The text a reader sees, without scripts and styles."
    s = _soup(path)
    for t in s(["script", "style"]): t.decompose()
    return s.get_text(" ")


# ------------------------------------------------------------------------------------------ cells


def _nb(*cells):
    return {"cells": [{"cell_type": k, "source": src, "metadata": {}, "outputs": outs} for k, src, outs in cells]}


def test_directives_are_split_off():
    d, body = render_docs.split_directives("#| export\n#|eval: false\ndef f(): pass\n")
    assert d == {"export": [], "eval:": ["false"]} and body == "def f(): pass"


def test_cells_shown_as_nbdev_shows_them():
    out = [{"output_type": "stream", "name": "stdout", "text": "42\n"}]
    nb = _nb(("code", "#| default_exp privacy.mechanisms", []),
             ("markdown", "# title\n\n> summary", []),
             ("code", "#| export\ndef f(): return 42", []),
             ("code", "#| hide\nfrom fastcore.test import test_eq\nsecret = 1", []),
             ("code", "from fastcore.test import test_eq, test_close", []),
             ("code", "from fastcore.test import test_eq\ntest_eq(f(), 42)", []),
             ("code", "#| echo: false\nprint(f())", out),
             ("code", "#| include: false\nx = 1", []))
    cells, default_exp = render_docs.visible_cells(nb)
    assert default_exp == "privacy.mechanisms"
    assert [(c.kind, c.source) for c in cells] == [("markdown", "# title\n\n> summary"), ("code", "def f(): return 42"),
                                                  ("code", "test_eq(f(), 42)"), ("code", "")]
    assert cells[1].exported_to == "privacy.mechanisms" and cells[2].exported_to is None
    assert cells[3].outputs == out                   # echo: false keeps the output only


def test_numpydoc_sections():
    doc = """Noise scale.

    Parameters
    ----------
    epsilon : float > 0
        Privacy loss.
    delta : float
        Failure
        probability.

    Returns
    -------
    float
        The scale.
    """
    secs = render_docs.parse_numpydoc(doc)
    assert secs[0] == ("", "Noise scale.")
    assert secs[1] == ("Parameters", [("epsilon", "float > 0", "Privacy loss."), ("delta", "float", "Failure\nprobability.")])
    assert secs[2] == ("Returns", [("float", "", "The scale.")])


def _visible_code_lines(soup):
    "Line counts of the code a reader sees without a click: every highlighted input not inside a closed <details>."
    return [len(pre.get_text().rstrip("\n").splitlines()) for pre in soup.select("div.input pre")
            if pre.find_parent("details") is None]


def _write_nb(path, *cells):
    path.parent.mkdir(parents=True, exist_ok=True)
    nb = _nb(*cells)
    nb.update(metadata={}, nbformat=4, nbformat_minor=5)
    path.write_text(json.dumps(nb), encoding="utf-8")


def test_long_code_cells_are_folded(tmp_path):
    from bs4 import BeautifulSoup
    nbs = tmp_path / "nbs"
    _write_nb(nbs / "index.ipynb", ("markdown", "# home\n\n> the learning path", []))
    long_export = "#| export\n" + "\n".join(f"x{i} = {i}" for i in range(40))       # 40 lines once the directive goes
    at_limit = "\n".join(f"y{i} = {i}" for i in range(render_docs.FOLD_LINES))       # exactly 25 lines: shown
    _write_nb(nbs / "01_chapter/00_page.ipynb", ("code", "#| default_exp chapter.page", []),
              ("markdown", "# page\n\n> a page", []), ("code", long_export, []), ("code", at_limit, []),
              ("code", "\n".join(f"z{i} = {i}" for i in range(26)), []))
    out = tmp_path / "site"
    render_docs.render_site(out, nbs=nbs, api=False)
    soup = BeautifulSoup((out / "01_chapter/00_page.html").read_text(encoding="utf-8"), "html.parser")
    folds = soup.find_all("details", class_="fold")
    assert [d.summary.get_text() for d in folds] == ["exported code, 40 lines", "code, 26 lines"]
    assert all(not d.has_attr("open") for d in folds)                                 # closed until clicked
    assert "x39 = 39" in folds[0].get_text() and "z25 = 25" in folds[1].get_text()    # folded, not cut
    assert _visible_code_lines(soup) == [25]                                         # the 25-line cell stays open
    assert "exported to dppca_nb.chapter.page" in soup.get_text("")                   # the tag stays outside the fold


def test_site_shows_no_long_code_unfolded(site):
    for name in PAGES:
        lines = _visible_code_lines(_soup(site / name))
        assert lines and max(lines) <= render_docs.FOLD_LINES, (name, max(lines, default=0))


# ------------------------------------------------------------------------------------------ the site


def test_pages_are_clean(site):
    for name in PAGES:
        raw = (site / name).read_text(encoding="utf-8")
        text = _visible_text(site / name)
        for block in _soup(site / name).find_all("pre"):     # code shown as code: no directive line (prose may name one)
            lines = block.get_text().splitlines()
            assert not any(line.lstrip().startswith("#|") for line in lines), f"{name}: an nbdev directive is shown"
        assert not re.search(r"In\s*(&nbsp;)?\[[ 0-9]*\]", raw), f"{name}: an input prompt is shown"
        assert "fastcore.test" not in text, f"{name}: a test import is shown"
    mech = _soup(site / PAGES[1]).get_text("")
    assert "def gaussian_sigma(" in mech and "test_close(" in mech    # the library and its tests are shown
    assert "exported to dppca_nb.privacy.mechanisms" in mech


def test_index_is_the_learning_path(site):
    text = _visible_text(site / "index.html")
    assert "A learning path" in text and "Quick start" in text        # the rendered index.ipynb
    hrefs = [a["href"] for a in _soup(site / "index.html").find_all("a", href=True)]
    assert "03_privacy/00_mechanisms.html" in hrefs and "03_privacy/index.html" in hrefs and "api.html" in hrefs
    # the backticked `03_privacy/00_mechanisms` of the learning path became a link
    assert any(a.get_text() == "03_privacy/00_mechanisms" and a["href"] == "03_privacy/00_mechanisms.html"
               for a in _soup(site / "index.html").find_all("a", href=True))
    back = [a["href"] for a in _soup(site / PAGES[1]).find_all("a", href=True)]
    assert {"../index.html", "../03_privacy/index.html", "../api.html"} <= set(back)   # home, chapter, API


def test_mathjax_is_bundled_and_loaded_relatively(site):
    assert (site / "_static/mathjax/MathJax.js").is_file()
    assert (site / f"_static/mathjax/config/{render_docs.MATHJAX_CONFIG}.js").is_file()
    assert (site / "_static/mathjax/fonts/HTML-CSS/STIX-Web/woff/STIXMathJax_Main-Regular.woff").is_file()
    size = sum(f.stat().st_size for f in (site / "_static/mathjax").rglob("*") if f.is_file())
    assert size < 4_000_000, f"the MathJax copy is {size / 1e6:.1f} MB: copy only what the pages load"
    for name in PAGES + ["api.html"]:
        srcs = [s["src"] for s in _soup(site / name).find_all("script", src=True)]
        mj = [s for s in srcs if "MathJax.js" in s]
        assert len(mj) == 1 and "://" not in mj[0] and not mj[0].startswith("/"), (name, srcs)
        assert ((site / name).parent / mj[0].split("?")[0]).resolve() == (site / "_static/mathjax/MathJax.js").resolve()
    assert "$" in (site / PAGES[1]).read_text(encoding="utf-8")      # the TeX is left for MathJax to typeset


def test_every_link_resolves(site):
    pages = PAGES + ["03_privacy/index.html", "api.html"]
    ids = {}
    for name in pages:
        soup = _soup(site / name)
        for tag, attr in (("a", "href"), ("link", "href"), ("script", "src"), ("img", "src")):
            for el in soup.find_all(tag, **{attr: True}):
                url = el[attr]
                if re.match(r"^(https?|mailto|data):", url): continue
                path, _, frag = url.partition("#")
                path = path.split("?")[0]
                target = ((site / name).parent / unquote(path)).resolve() if path else (site / name).resolve()
                assert target.is_file(), f"{name}: {tag} {attr}={url!r} points to no file of the site"
                assert site.resolve() in target.parents, f"{name}: {url!r} leaves the site"
                if frag and target.suffix == ".html":
                    if target not in ids:
                        ids[target] = {e["id"] for e in _soup(target).find_all(id=True)}
                    assert frag in ids[target], f"{name}: {url!r}: no id {frag!r} in {target.name}"


def test_api_reference(site):
    from dppca_nb.privacy.mechanisms import gaussian_sigma
    soup = _soup(site / "api.html")
    item = soup.find(id="dppca_nb.privacy.mechanisms.gaussian_sigma")
    assert item is not None
    sig = item.find(class_="api-sig").get_text()
    params = list(inspect.signature(gaussian_sigma).parameters)
    assert re.search(r"gaussian_sigma\(" + r".*".join(map(re.escape, params)) + r".*\)", sig), sig
    listed = [dt.find("code").get_text() for dt in item.find("dl", class_="params").find_all("dt")]
    assert listed[:len(params)] == params                            # the numpydoc Parameters section, readable
    text = soup.get_text(" ")
    layers = {layer for _, _, layer in render_docs.public_modules()}
    assert {"core", "privacy", "algorithms", "estimators", "cli"} <= layers
    for layer in layers:                                             # grouped by layer, each with its heading
        assert soup.find(id=f"layer-{layer.replace(' ', '-')}") is not None, layer
    for mod in ("dppca_nb.core.validation", "dppca_nb.privacy.accounting", "dppca_nb.estimators", "dppca_nb.cli"):
        assert soup.find(id=mod) is not None, mod
    assert "AnalyzeGaussPCA" in text and "check_data" in text


def test_command_line(tmp_path, capsys):
    assert render_docs.main(["--out", str(tmp_path), "--no-api", "--only", "nbs/00_core/00_validation.ipynb"]) == 0
    assert capsys.readouterr().out.strip() == f"Docs: {tmp_path / 'index.html'}"
    assert (tmp_path / "00_core/00_validation.html").is_file() and not (tmp_path / "api.html").exists()
    # as a script, with a clear error for a notebook that does not exist
    r = subprocess.run([sys.executable, str(ROOT / "tools/render_docs.py"), "--out", str(tmp_path), "--only", "nope"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--only" in r.stderr and "nope" in r.stderr and "Traceback" not in r.stderr
    with pytest.raises(ValueError, match="no notebook 'nope'"):     # DocsError: a ValueError for callers such as the CLI
        render_docs.render_site(tmp_path, only=["nope"])


# ------------------------------------------------------------------------------------------ a real browser


def _browser_skip():
    if os.environ.get("DPPCA_BROWSER_TESTS") != "1":
        return "browser tests run only with DPPCA_BROWSER_TESTS=1"
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"Chromium not found at {CHROMIUM}"
    return None


def dump_dom(url, budget_ms=20000, timeout=90):
    "The DOM of `url` after headless Chromium let its scripts run for `budget_ms` of virtual time (no network)."
    with tempfile.TemporaryDirectory(prefix="dppca_chromium_") as profile:
        r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                            "--disable-background-networking", "--disable-component-update", "--disable-extensions",
                            "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--allow-file-access-from-files",
                            f"--virtual-time-budget={budget_ms}", "--dump-dom", url],
                           capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


@pytest.mark.skipif(_browser_skip() is not None, reason=_browser_skip() or "")
@pytest.mark.parametrize("name", ["03_privacy/00_mechanisms.html", "api.html"])
def test_math_is_typeset_in_a_browser(site, name):
    from bs4 import BeautifulSoup
    tex = len(re.findall(r"\$[^$\s][^$]{0,200}\$", _visible_text(site / name)))
    assert tex >= 3, f"{name}: expected a page with formulas, found {tex}"
    dom = BeautifulSoup(dump_dom((site / name).resolve().as_uri()), "html.parser")
    assert dom.html.get("data-mathjax") == "done", f"{name}: MathJax did not finish (is the bundled copy complete?)"
    typeset = dom.select("span.MathJax, div.MathJax_Display")
    assert len(typeset) >= tex, f"{name}: {len(typeset)} formulas typeset out of {tex}"
    assert not dom.select(".MathJax_Error, .noError, merror"), f"{name}: a formula failed to typeset"
    for t in dom(["script", "style", "pre", "code"]): t.decompose()
    text = dom.get_text(" ")
    raw = re.findall(r"\$[^$\s][^$]{0,80}\$", text)
    assert not raw, f"{name}: TeX left untypeset: {raw[:3]}"
    assert "\\frac" not in text and "\\varepsilon" not in text, f"{name}: TeX macros shown as text"
