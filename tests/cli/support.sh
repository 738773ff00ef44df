#!/usr/bin/env bash
# strata-moe support: the matrix of what this build runs, from the arm registry, as text and JSON.
# Usage: support.sh <strata-moe> <tests/data dir>
set -u
bin="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=lib/common.bash
source "$(dirname "$0")/lib/common.bash"

"$bin" support --json >"$tmp/support.json" 2>"$tmp/err" || fail "support --json exited non-zero: $(cat "$tmp/err")"
python3 - "$tmp/support.json" <<'PY' || fail "support --json content"
import json, sys
doc = json.load(open(sys.argv[1]))
assert set(doc) == {"build", "arms", "formats"}, doc.keys()
formats = doc["formats"]
assert len(formats) == 25, [f["format"] for f in formats]
assert len({f["format"] for f in formats}) == 25
for f in formats:
    for profile in ("q8", "q10"):
        for role in ("gate_up", "down"):
            cpu = [c["arm"] for c in f["profiles"][profile][role] if c["backend"] == "cpu"]
            assert cpu == ["production", "fused"], (f["format"], profile, role, cpu)
            for c in f["profiles"][profile][role]:
                # the format's own block divides the rows it is in
                rows = c["d_multiple"] if role == "gate_up" else c["f_multiple"]
                assert rows % f["block_values"] == 0, (f["format"], c)
arms = doc["arms"]
assert {(a["backend"], a["arm"], a["profile"]) for a in arms if a["backend"] == "cpu"} == {
    ("cpu", "production", "q8"), ("cpu", "fused", "q8"), ("cpu", "production", "q10"), ("cpu", "fused", "q10")}
if doc["build"]["cuda"]:
    names = {(a["arm"], a["profile"]) for a in arms if a["backend"] == "cuda"}
    for want in (("production", "q8"), ("fused-sm80", "q8"), ("fused-hopper", "q8"), ("fused-wmma", "q8"),
                 ("fused-sm80", "q10"), ("fused-hopper", "q10"), ("fused-wmma", "q10")):
        assert want in names, (want, names)
    hopper = [a for a in arms if a["backend"] == "cuda" and a["arm"] == "fused-hopper"]
    assert all(a["needs_sm90a"] for a in hopper), hopper
    # q8's fused-hopper: IQ3_S gate/up with d % 256; q10's: all 25 formats with d and f % 64.
    q8_hopper = [a for a in hopper if a["profile"] == "q8"]
    q10_hopper = [a for a in hopper if a["profile"] == "q10"]
    assert q8_hopper and all(a["d_multiple"] == 256 for a in q8_hopper), q8_hopper
    assert q10_hopper and all(a["d_multiple"] == 64 and a["f_multiple"] == 64 and len(a["gate_up"]) == 25
                              and len(a["down"]) == 25 for a in q10_hopper), q10_hopper
    iq3_s = next(f for f in formats if f["format"] == "iq3_s")
    assert any(c["backend"] == "cuda" and c["arm"] == "production" for c in iq3_s["profiles"]["q8"]["gate_up"])
PY

"$bin" support >"$tmp/support.txt" 2>"$tmp/err" || fail "support exited non-zero: $(cat "$tmp/err")"
grep -q "^cpu   production    q8       all        all        d % 32, f % 32$" "$tmp/support.txt" ||
  fail "support: no CPU production row: $(head -20 "$tmp/support.txt")"
grep -q "^iq3_s (block of 256)$" "$tmp/support.txt" || fail "support: no iq3_s section"
if ((failures)); then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all support checks passed"
