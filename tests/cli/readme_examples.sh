#!/usr/bin/env bash
# The README shows every file under examples/ verbatim: after each `<!-- file: PATH -->` marker,
# the fenced block must equal PATH's content, and every example file must have a marker.
# Usage: readme_examples.sh <strata-moe> <tests/data> (arguments unused)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python3 - "$root" <<'PY'
import pathlib, re, sys
root = pathlib.Path(sys.argv[1])
readme = (root / "README.md").read_text()
shown = {}
for m in re.finditer(r"<!-- file: (\S+) -->\n```[a-z]*\n(.*?)```\n", readme, re.S):
    shown[m.group(1)] = m.group(2)
files = sorted(str(p.relative_to(root)) for p in (root / "examples").rglob("*") if p.is_file())
errors = [f"{f}: not shown in README.md" for f in files if f not in shown]
errors += [f"{f}: README.md shows a file that does not exist" for f in shown if f not in files]
errors += [f"{f}: README.md's copy differs from the file" for f in files
           if f in shown and shown[f] != (root / f).read_text()]
if errors:
    sys.exit("readme_examples: " + "; ".join(errors))
print(f"readme_examples: {len(files)} example files shown verbatim")
PY
