#!/usr/bin/env bash
# `strata-moe bench` through the real binary: a tiny CPU cell as JSON and as a table, refused
# geometries and arguments, and scripts/plot-bench.py on the results.
# Usage: bench.sh <path-to-strata-moe> <tests/data dir>
set -uo pipefail
bin=$1
plot=$(cd "$(dirname "$0")/../.." && pwd)/scripts/plot-bench.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=lib/common.bash
source "$(dirname "$0")/lib/common.bash"

seed=$(( (RANDOM << 15) | RANDOM ))
echo "seed $seed"
tiny=(bench --backend cpu --tokens 96 --cells 2 --seed "$seed" --quiet)

# ---- JSON on stdout --------------------------------------------------------------------------
if "$bin" "${tiny[@]}" --chunk 32 --json >"$tmp/run.json" 2>"$tmp/err"; then
  python3 - "$tmp/run.json" <<'PY' || fail "bench --json content"
import json, sys
doc = json.load(open(sys.argv[1]))
for key in ("schema", "date", "git_commit", "command", "backend", "device", "ceiling_tops", "runs"):
    assert key in doc, key
assert doc["schema"] == "strata-moe-bench/1", doc["schema"]
assert doc["backend"] == "cpu" and doc["ceiling_tops"] is None
assert "bench" in doc["command"] and "--json" in doc["command"], doc["command"]
assert len(doc["date"]) == 20 and doc["date"].endswith("Z"), doc["date"]
assert len(doc["runs"]) == 1
run = doc["runs"][0]
cell = run["cell"]
# The CPU defaults for an unspecified geometry, and the flags given.
assert (cell["d"], cell["f"], cell["E"], cell["k"]) == (512, 256, 16, 4), cell
assert (cell["gate_up"], cell["down"], cell["routing"]) == ("iq3_s", "q2_0", "skewed"), cell
assert (cell["tokens"], cell["T"], cell["layers"], cell["cells"], cell["units"]) == (96, 32, 1, 2, 3), cell
assert cell["ops_per_cell"] == 2 * 96 * 4 * 3 * 512 * 256, cell["ops_per_cell"]
assert run["arms"] == {"A": "production", "B": "fused"}, run["arms"]
check = run["check"]
assert check["passed"] is True and check["bitwise_claimed"] is True, check
assert check["bitwise_diffs"] == 0 and check["compared_elems"] == 32 * 512, check
assert check["A"]["rel_rms"] <= 1e-4 and check["B"]["worst_row"] <= 1e-3, check
results = run["results"]
assert [r["arm"] for r in results] == ["production", "fused"], results
for slot, r in zip("AB", results):
    assert r["slot"] == slot
    assert r["layer_us"]["median"] > 0 and r["layer_us"]["n"] == 3 * (3 if slot == "A" else 2), r["layer_us"]
    assert r["phases_us"] is None, "the CPU times whole layers only"
    assert len(r["cell_ms"]) == (3 if slot == "A" else 2)
    assert r["gops"] > 0 and abs(r["tops"] * 1000 - r["gops"]) < 1e-9 * r["gops"], r
    assert r["ceiling_fraction"] is None
    assert r["weight_gb_per_s"] > 0 and len(r["per_layer_us"]) == 1
    want = cell["ops_per_cell"] / (r["median_cell_ms"] * 1e-3) / 1e9
    assert abs(r["gops"] - want) <= 1e-9 * want, (r["gops"], want)
ratio = run["ratio"]
assert ratio["b_over_a"]["n"] == 2 * 3 and ratio["a_over_a"]["n"] == 2 * 3, ratio
assert len(ratio["cell_b_over_a"]) == 2
band = ratio["band"]
assert band["lo"] <= 0.995 and band["hi"] >= 1.005 and abs(band["width"] - (band["hi"] - band["lo"])) < 1e-12, band
m = ratio["b_over_a"]["median"]
want = "PROMOTE" if m < band["lo"] - band["width"] else "REJECT-slower" if m > band["hi"] else "REJECT-at-parity"
assert run["verdict"] == want, (run["verdict"], m, band)
PY
else
  fail "bench --json exited non-zero: $(cat "$tmp/err")"
fi

# ---- the table, with --out and two chunk sizes -------------------------------------------------
if "$bin" "${tiny[@]}" --chunk 16,48 --out "$tmp/out.json" >"$tmp/table.txt" 2>"$tmp/err"; then
  header=$(grep -E '^arm +name' "$tmp/table.txt" | head -1)
  for column in layer_us IQR_us quantize group gate_up swiglu down combine cell_ms GOPS %ceil GB/s time/A; do
    grep -qE "(^| )$column( |$)" <<<"$header" || fail "table header lacks '$column': $header"
  done
  [[ $(grep -cE '^A +production +[0-9.]+ ' "$tmp/table.txt") == 2 ]] || fail "table: want one A row per T: $(cat "$tmp/table.txt")"
  [[ $(grep -cE '^B +fused +[0-9.]+ ' "$tmp/table.txt") == 2 ]] || fail "table: want one B row per T"
  grep -qE '^B/A +fused / production: median [0-9.]+, IQR' "$tmp/table.txt" || fail "table: no B/A line"
  grep -qE '^A/A +band \[' "$tmp/table.txt" || fail "table: no A/A band line"
  grep -qE '^verdict (PROMOTE|REJECT-at-parity|REJECT-slower): ' "$tmp/table.txt" || fail "table: no verdict line"
  grep -qE '^check +passed: .*bitwise equal' "$tmp/table.txt" || fail "table: no passed check line"
  python3 -c "
import json, sys
doc = json.load(open(sys.argv[1]))
assert [r['cell']['T'] for r in doc['runs']] == [16, 48], doc['runs']
assert [r['cell']['units'] for r in doc['runs']] == [6, 2]
" "$tmp/out.json" || fail "--out: not the two runs"
else
  fail "bench (table) exited non-zero: $(cat "$tmp/err")"
fi

# ---- refused cells and arguments: exit status 2, a message naming the culprit ---------------------
expect_status 2 "gpt-oss-120b" "$bin" bench --backend cpu --preset gpt-oss-120b --quiet
grep -qF "iq3_s" "$tmp/err" || fail "refused geometry: the message does not name the format: $(cat "$tmp/err")"
grep -qF "2880" "$tmp/err" || fail "refused geometry: the message does not name d: $(cat "$tmp/err")"
expect_status 2 "q2_0" "$bin" bench --backend cpu --d 256 --ffn 96 --experts 8 --k 2 --quiet
expect_status 2 "unknown arm 'wmma'" "$bin" bench --arms production,wmma --quiet
expect_status 2 "--preset: unknown 'nonesuch'" "$bin" bench --preset nonesuch --quiet
expect_status 2 "--chunk: 512" "$bin" bench --tokens 256 --chunk 512 --quiet
expect_status 2 "--gate-up: unknown format" "$bin" bench --gate-up iq9_q --quiet
expect_status 2 "--d, --ffn, --experts and --k" "$bin" bench --backend cuda --d 2048 --quiet
expect_status 2 "--weight-offset: an option of --backend cuda" "$bin" bench --backend cpu --weight-offset 2 --quiet
expect_status 2 "--weight-offset: must be even" "$bin" bench --backend cuda --preset qwen35-a3b --weight-offset 3 --quiet
expect_status 2 "--weight-offset" "$bin" bench --backend cuda --preset qwen35-a3b --weight-offset 256 --quiet

# ---- the plot ------------------------------------------------------------------------------------
for input in run out; do
  if python3 "$plot" "$tmp/$input.json" "$tmp/$input.svg" 2>"$tmp/err"; then
    python3 - "$tmp/$input.svg" "$input" <<'PY' || fail "plot-bench.py: $input.svg is not the expected SVG"
import sys
import xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == ns + "svg", root.tag
bars = [r for r in root.iter(ns + "rect") if r.find(ns + "title") is not None]
texts = " ".join(t.text or "" for t in root.iter(ns + "text"))
if sys.argv[2] == "run":
    assert len(bars) == 2, len(bars)  # one whole-layer bar per arm
    assert root.find(ns + "polyline") is None, "one T: no TOPS-vs-T panel"
else:
    assert len(bars) == 4, len(bars)
    assert len(root.findall(ns + "polyline")) == 2, "two T: one GOPS line per arm"
    assert "T = 16" in texts and "T = 48" in texts, texts
for bar in bars:
    assert float(bar.get("height")) > 0, bar.attrib
PY
  else
    fail "plot-bench.py $input.json failed: $(cat "$tmp/err")"
  fi
done
expect_status 1 "not a strata-moe bench results file" python3 "$plot" /dev/null "$tmp/x.svg"

if ((failures)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "bench CLI: all checks passed"
