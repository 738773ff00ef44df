#!/usr/bin/env python3
"""Draws `strata-moe bench` results as an SVG (standard library only).

    scripts/plot-bench.py RESULTS.json [MORE.json ...] OUT.svg

Top panel: µs per layer for each run (chunk size T) and arm, stacked by phase where the backend
timed phases (CUDA), one bar per arm otherwise (CPU); each group is labelled with its B/A ratio and
verdict. Bottom panel, when the files hold more than one T: effective TOPS (GOPS on the CPU)
against T for each arm, T on a log scale.
"""
import json
import math
import sys
from xml.sax.saxutils import escape

PHASES = ["quantize", "group", "gate_up", "swiglu", "down", "combine"]
PHASE_COLOURS = ["#8dd3c7", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69"]
WHOLE_COLOUR = "#999999"
ARM_COLOURS = ["#1f77b4", "#d62728"]
WIDTH = 960
FONT = 'font-family="sans-serif"'


def load_runs(paths):
    runs, heads = [], []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"plot-bench: {path}: not a strata-moe bench results file ({e})")
        if not isinstance(doc, dict) or doc.get("schema") != "strata-moe-bench/1":
            schema = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
            sys.exit(f"plot-bench: {path}: not a strata-moe bench results file (schema {schema!r})")
        heads.append(doc)
        for run in doc["runs"]:
            runs.append((doc, run))
    if not runs:
        sys.exit("plot-bench: no runs in the input files")
    runs.sort(key=lambda dr: dr[1]["cell"]["T"])
    return heads, runs


def nice_ceiling(value):
    """The smallest 1/2/5 x 10^n at or above value (axis tops)."""
    if value <= 0:
        return 1.0
    exp = math.floor(math.log10(value))
    for m in (1, 2, 5, 10):
        if m * 10 ** exp >= value:
            return m * 10 ** exp
    return 10 ** (exp + 1)


def text(x, y, s, size=12, anchor="start", extra=""):
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" {FONT} {extra}>{escape(str(s))}</text>'


def bars_panel(runs, top):
    """Stacked bars of time per phase per arm; returns (svg parts, height)."""
    parts = []
    height = 340
    left, right, bottom = 80, WIDTH - 20, top + height - 70
    plot_h = bottom - (top + 30)
    parts.append(text(left, top + 16, "µs per layer (median over every layer, chunk and run), by phase", 14,
                      extra='font-weight="bold"'))
    bars = []  # (group index, arm slot, segments [(value, colour, label)])
    for g, (_, run) in enumerate(runs):
        for slot, res in enumerate(run["results"]):
            phases = res.get("phases_us")
            if phases:
                segs = [(phases[p]["median"], PHASE_COLOURS[i], p) for i, p in enumerate(PHASES)]
            else:
                segs = [(res["layer_us"]["median"], WHOLE_COLOUR, "layer")]
            bars.append((g, slot, segs))
    top_value = nice_ceiling(max([sum(v for v, _, _ in segs) for _, _, segs in bars] + [1e-9]))
    # Axis and grid.
    for i in range(6):
        v = top_value * i / 5
        y = bottom - plot_h * i / 5
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#dddddd"/>')
        parts.append(text(left - 6, y + 4, f"{v:g}", 11, "end"))
    parts.append(f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="black"/>')
    parts.append(f'<line x1="{left}" y1="{bottom}" x2="{left}" y2="{top + 30}" stroke="black"/>')
    n_groups = len(runs)
    group_w = (right - left) / n_groups
    bar_w = min(60.0, group_w / 3)
    for g, slot, segs in bars:
        x = left + g * group_w + group_w / 2 + (slot - 1) * bar_w + (4 if slot else -4) * 0.5
        y = bottom
        for value, colour, label in segs:
            h = plot_h * value / top_value
            y -= h
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w:.1f}" height="{h:.1f}" fill="{colour}" '
                         f'stroke="white" stroke-width="0.5"><title>{escape(label)}: {value:.1f} µs</title></rect>')
        arm = runs[g][1]["results"][slot]["arm"]
        parts.append(text(x + bar_w / 2, bottom + 14, arm, 11, "middle"))
        parts.append(text(x + bar_w / 2, y - 4, f"{sum(v for v, _, _ in segs):.0f}", 10, "middle"))
    for g, (_, run) in enumerate(runs):
        cx = left + g * group_w + group_w / 2
        ratio = run.get("ratio")
        ratio_s = f"B/A {ratio['b_over_a']['median']:.3f}" if ratio else "B/A -"
        parts.append(text(cx, bottom + 30, f"T = {run['cell']['T']}", 12, "middle", 'font-weight="bold"'))
        parts.append(text(cx, bottom + 45, f"{ratio_s}, {run['verdict']}", 11, "middle"))
    # Legend.
    lx = left
    legend = [(p, PHASE_COLOURS[i]) for i, p in enumerate(PHASES)] + [("whole layer (no phase times)", WHOLE_COLOUR)]
    for label, colour in legend:
        parts.append(f'<rect x="{lx}" y="{bottom + 54}" width="10" height="10" fill="{colour}"/>')
        parts.append(text(lx + 14, bottom + 63, label, 11))
        lx += 14 + 7 * len(label) + 16
    return parts, height


def rate_panel(heads, runs, top):
    """TOPS (or GOPS) against T per arm; returns (svg parts, height)."""
    gpu = any(h.get("backend") == "cuda" for h in heads)
    key, unit = ("tops", "TOPS") if gpu else ("gops", "GOPS")
    series = {}
    for _, run in runs:
        for res in run["results"]:
            if res.get(key) is not None:
                series.setdefault(res["arm"], []).append((run["cell"]["T"], res[key]))
    parts = []
    height = 300
    left, right, bottom = 80, WIDTH - 160, top + height - 40
    plot_h = bottom - (top + 30)
    parts.append(text(left, top + 16, f"effective {unit} (2·T·k·3·d·f / time) against T", 14,
                      extra='font-weight="bold"'))
    ts = sorted({t for pts in series.values() for t, _ in pts})
    top_value = nice_ceiling(max([v for pts in series.values() for _, v in pts] + [1e-9]))
    lo, hi = math.log2(ts[0]), math.log2(ts[-1])
    span = hi - lo if hi > lo else 1.0

    def px(t):
        return left + (right - left) * (math.log2(t) - lo) / span

    def py(v):
        return bottom - plot_h * v / top_value

    for i in range(6):
        v = top_value * i / 5
        parts.append(f'<line x1="{left}" y1="{py(v):.1f}" x2="{right}" y2="{py(v):.1f}" stroke="#dddddd"/>')
        parts.append(text(left - 6, py(v) + 4, f"{v:g}", 11, "end"))
    for t in ts:
        parts.append(text(px(t), bottom + 16, str(t), 11, "middle"))
    parts.append(f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="black"/>')
    parts.append(f'<line x1="{left}" y1="{bottom}" x2="{left}" y2="{top + 30}" stroke="black"/>')
    ceiling = next((h.get("ceiling_tops") for h in heads if h.get("ceiling_tops")), None)
    if gpu and ceiling:
        parts.append(text(right, top + 30, f"ceiling {ceiling:g} TOPS (off the top of this axis)"
                          if ceiling > top_value else f"ceiling {ceiling:g} TOPS", 10, "end"))
    for i, (arm, pts) in enumerate(sorted(series.items())):
        colour = ARM_COLOURS[i % len(ARM_COLOURS)]
        pts.sort()
        path = " ".join(f"{px(t):.1f},{py(v):.1f}" for t, v in pts)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for t, v in pts:
            parts.append(f'<circle cx="{px(t):.1f}" cy="{py(v):.1f}" r="3.5" fill="{colour}">'
                         f'<title>{escape(arm)} T={t}: {v:.3g} {unit}</title></circle>')
        parts.append(f'<rect x="{right + 20}" y="{top + 40 + 18 * i}" width="10" height="10" fill="{colour}"/>')
        parts.append(text(right + 34, top + 49 + 18 * i, arm, 11))
    return parts, height


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: plot-bench.py RESULTS.json [MORE.json ...] OUT.svg")
    heads, runs = load_runs(argv[1:-1])
    out_path = argv[-1]
    cell = runs[0][1]["cell"]
    geometry = cell["preset"] or f"d={cell['d']} f={cell['f']} E={cell['E']} k={cell['k']}"
    title = (f"strata-moe bench: {geometry}, {cell['gate_up']}/{cell['down']}, {cell['routing']} routing, "
             f"{cell['layers']} layer(s) x {cell['tokens']} tokens")
    sub = f"{heads[0].get('backend')} on {heads[0].get('device')}, {heads[0].get('date')}"
    if heads[0].get("git_commit"):
        sub += f", commit {heads[0]['git_commit'][:12]}"

    parts = [text(20, 24, title, 15, extra='font-weight="bold"'), text(20, 42, sub, 11)]
    y = 50
    bar_parts, h = bars_panel(runs, y)
    parts += bar_parts
    y += h
    if len({run["cell"]["T"] for _, run in runs}) > 1:
        rate_parts, h = rate_panel(heads, runs, y)
        parts += rate_parts
        y += h
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{y + 10}" '
           f'viewBox="0 0 {WIDTH} {y + 10}">',
           f'<rect x="0" y="0" width="{WIDTH}" height="{y + 10}" fill="white"/>'] + parts + ["</svg>"]
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main(sys.argv)
