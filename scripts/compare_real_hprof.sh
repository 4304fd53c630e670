#!/usr/bin/env bash
# Cross-checks the HPROF importer against independent conversions of the
# same dumps to the text format (the shared real heaps, converted with the
# same model: MAT sizes, forced here with --model-sizes, fields + statics +
# the object->class edge):
# object counts, references, total/reachable bytes and every top-level
# dominator's id and retained size must agree. The conversions follow
# every referent as a strong reference, so the native dumps are read with
# `--references all` to compare like with like (scripts/check_referents.py
# checks the default, referents weak, independently).
#
#   scripts/compare_real_hprof.sh [HEAPTUI] [REALHEAPS_DIR]
set -euo pipefail
bin=${1:-target/release/heaptui}
dir=${2:-/work/shared/realheaps}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for gz in "$dir"/raw/*.hprof.gz "$dir"/raw/*.bin.gz; do
    [ -e "$gz" ] || continue
    name=$(basename "$gz"); name=${name%.gz}; name=${name%.hprof}; name=${name%.bin}
    txt="$dir/$name.dump.txt"
    [ -e "$txt" ] || { echo "$name: no text conversion"; continue; }
    # The conversions carry MAT's sizes: the model is forced.
    "$bin" report --json --top 0 --duplicates none --model-sizes --references all --no-cache "$gz" > "$tmp/a.json"
    "$bin" report --json --top 0 --duplicates none "$txt" > "$tmp/b.json"
    python3 - "$name" "$tmp/a.json" "$tmp/b.json" <<'PY' || status=1
import json, sys
name, a, b = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
keys = ["objects", "references", "types", "total_bytes", "reachable_objects", "reachable_bytes"]
diff = [(k, a["summary"][k], b["summary"][k]) for k in keys if a["summary"][k] != b["summary"][k]]
# Equal retained sizes may come in either order (ties follow object order,
# which differs between the two files).
dom = lambda r: sorted((d["id"], d["type"], d["retained_bytes"], d["retained_objects"]) for d in r["dominators"])
same_dom = dom(a) == dom(b)
print(f"{name}: {a['summary']['objects']} objects, {a['summary']['reachable_bytes']} reachable bytes, "
      f"{len(a['dominators'])} top-level dominators; summary {'agrees' if not diff else diff}; "
      f"dominators {'agree' if same_dom else 'DIFFER'}; roots {a['summary']['roots']} vs {b['summary']['roots']} records; "
      f"hprof diagnostics {({k: v for k, v in a['diagnostics'].items() if k != 'messages' and v})}")
sys.exit(0 if not diff and same_dom else 1)
PY
done
exit $status
