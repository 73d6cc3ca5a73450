"""The picture of the package's architecture in the index notebook (and the README): the layers and the data flow.

    python nbs/images/architecture.py        # rewrites nbs/images/architecture.svg

The index notebook checks that the committed SVG is what this script draws, and that LAYERS is the list of
layers that tests/test_layers.py enforces.
"""
from html import escape
from pathlib import Path

LAYERS = [  # lowest first: (package, what lives there)
    ("core", "validation, random_state, linear algebra"),
    ("backends", "blocked statistics over numpy or dask blocks"),
    ("data", "synthetic data, the Wishart sampler, loaders"),
    ("privacy", "calibration, noise, Contract and Release, accountant, audits"),
    ("algorithms", "one module per family, each in the registry"),
    ("theory", "error bounds and the papers' theorems"),
    ("estimators", "scikit-learn estimators read from the registry"),
    ("preprocessing", "private scaling and pipelines that add up their budgets"),
    ("experiments", "the studies behind dppca reproduce"),
    ("teach", "the explorers and the app"),
    ("cli", "the dppca command"),
]
FLOW = [  # (title, detail, style)
    ("public quantities", "n, p, k, the budget (epsilon, delta), the norm bound R, the options", "pub"),
    ("plan: a Contract", "mechanism, neighbouring relation, sensitivity, noise scale: fixed before any record is read", "pub"),
    ("statistic", "one blocked pass over X: clip rows to R, sum x x\u1d40 (numpy or dask)", "data"),
    ("release: a Release", "noise exactly as the contract says; a Release holds the value, the contract and the diagnostics", "noise"),
    ("post-processing", "top-k eigenvectors, Fantope ADMM, thresholding: free under DP", "pub"),
    ("V (p x k) and its contract", "then: theory (error bounds), figures, the CLI's one-line statement", "pub"),
]
FILL = {"pub": "#e8f1fb", "data": "#fdf0e0", "noise": "#e9f6ec"}
STROKE = {"pub": "#2f6db5", "data": "#c0762a", "noise": "#2e8b4a"}

def svg(width=1020):
    "The SVG text: the layers on the left (highest on top), the data flow of one release on the right."
    out, y0, h, gap = [], 64, 42, 6
    H = y0 + len(LAYERS) * (h + gap) + 40
    out.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{H}" viewBox="0 0 {width} {H}" '
               'font-family="Helvetica, Arial, sans-serif" font-size="13">')
    out.append('<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
               'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker></defs>')
    out.append(f'<rect x="0" y="0" width="{width}" height="{H}" fill="#ffffff"/>')
    # left: the layers, highest on top
    lx, lw = 40, 410
    out.append(f'<text x="{lx}" y="28" font-size="16" font-weight="bold">The layers (packages of dppca_nb)</text>')
    out.append(f'<text x="{lx}" y="48" fill="#555">a module imports only its own layer and the layers below it</text>')
    for i, (name, what) in enumerate(reversed(LAYERS)):
        y = y0 + i * (h + gap)
        shade = 235 - 6 * (len(LAYERS) - 1 - i)
        out.append(f'<rect x="{lx}" y="{y}" width="{lw}" height="{h}" rx="6" fill="rgb({shade},{shade},{min(255, shade + 12)})" '
                   'stroke="#5a5a7a" stroke-width="1"/>')
        out.append(f'<text x="{lx + 12}" y="{y + 18}" font-weight="bold" font-family="Menlo, Consolas, monospace">{escape(name)}</text>')
        out.append(f'<text x="{lx + 12}" y="{y + 34}" fill="#333" font-size="12">{escape(what)}</text>')
    ytop, ybot = y0 + 8, y0 + len(LAYERS) * (h + gap) - gap - 8
    out.append(f'<line x1="{lx - 18}" y1="{ytop}" x2="{lx - 18}" y2="{ybot}" stroke="#444" stroke-width="2" marker-end="url(#arrow)"/>')
    out.append(f'<text x="{lx - 24}" y="{(ytop + ybot) / 2}" fill="#444" text-anchor="middle" '
               f'transform="rotate(-90 {lx - 24} {(ytop + ybot) / 2})">imports point down, never up</text>')
    # right: the data flow
    rx, rw = 500, 430
    out.append(f'<text x="{rx}" y="28" font-size="16" font-weight="bold">The data flow of one private release</text>')
    out.append(f'<text x="{rx}" y="48" fill="#555">blue: public; orange: touches the records; green: adds the noise</text>')
    fh, fgap = 58, 14
    for i, (title, detail, st) in enumerate(FLOW):
        y = y0 + i * (fh + fgap)
        out.append(f'<rect x="{rx}" y="{y}" width="{rw}" height="{fh}" rx="8" fill="{FILL[st]}" stroke="{STROKE[st]}" stroke-width="1.5"/>')
        out.append(f'<text x="{rx + 12}" y="{y + 20}" font-weight="bold">{escape(title)}</text>')
        words, lines, cur = detail.split(), [], ""
        for w in words:                                  # wrap the detail at about 66 characters
            if len(cur) + len(w) + 1 > 66: lines.append(cur); cur = w
            else: cur = f"{cur} {w}".strip()
        lines.append(cur)
        for j, ln in enumerate(lines[:2]):
            out.append(f'<text x="{rx + 12}" y="{y + 37 + 14 * j}" fill="#333" font-size="12">{escape(ln)}</text>')
        if i < len(FLOW) - 1:
            out.append(f'<line x1="{rx + rw / 2}" y1="{y + fh}" x2="{rx + rw / 2}" y2="{y + fh + fgap - 1}" stroke="#444" '
                       'stroke-width="1.5" marker-end="url(#arrow)"/>')
    # the records enter at the statistic; the diagnostics leave the release for the curator only
    ys = y0 + 2 * (fh + fgap) + fh / 2
    out.append(f'<text x="{rx + rw + 6}" y="{ys - 4}" fill="#c0762a" font-weight="bold">X</text>')
    out.append(f'<text x="{rx + rw + 6}" y="{ys + 12}" fill="#c0762a" font-size="11">records</text>')
    yr = y0 + 3 * (fh + fgap) + fh / 2
    out.append(f'<text x="{rx + rw + 6}" y="{yr - 4}" fill="#8a3030" font-size="11">diagnostics:</text>')
    out.append(f'<text x="{rx + rw + 6}" y="{yr + 10}" fill="#8a3030" font-size="11">curator only,</text>')
    out.append(f'<text x="{rx + rw + 6}" y="{yr + 24}" fill="#8a3030" font-size="11">not private</text>')
    out.append('</svg>')
    return "\n".join(out) + "\n"

SVG = Path(__file__).with_suffix(".svg")

if __name__ == "__main__":
    SVG.write_text(svg(), encoding="utf-8")
