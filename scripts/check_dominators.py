#!/usr/bin/env python3
"""Independent check of `heaptui report --json --objects` on a dump.

Parses the dump itself (a deliberately simple, sequential reading of docs/formats.md
for well-formed files), computes immediate dominators with networkx
(Cooper–Harvey–Kennedy, a different algorithm from heaptui's Semi-NCA) and
retained sizes by summing dominator subtrees, and compares every object.

    cargo build --release
    python3 scripts/check_dominators.py DUMP        # needs `pip install networkx`
"""
import json
import subprocess
import sys

import networkx as nx


def parse(path):
    objects, sizes, refs, types = {}, {}, {}, {}
    roots = []
    section = 0
    type_names = {}
    obj_type = {}
    with open(path, "rb") as f:
        for raw in f:
            parts = raw.split()
            if not parts:
                continue
            kind = parts[0]
            if kind == b"a":
                section += 1
            elif kind == b"c":
                pass
            elif kind == b"t":
                type_names[(section, int(parts[1], 16))] = raw.split(None, 2)[2].strip().decode("utf-8", "replace")
            elif kind == b"o":
                oid = int(parts[1], 16)
                if oid in sizes:
                    continue
                sizes[oid] = int(parts[3], 16)
                refs[oid] = [int(p, 16) for p in parts[4:]]
                obj_type[oid] = (section, int(parts[2], 16))
            elif kind == b"r":
                flags = int(parts[3], 16)
                roots.append((int(parts[1], 16), flags))
    return sizes, refs, roots


def main(path, binary="target/release/heaptui"):
    sizes, refs, roots = parse(path)
    g = nx.DiGraph()
    SUPER = "super"
    g.add_node(SUPER)
    for o, rs in refs.items():
        g.add_node(o)
        for r in rs:
            if r in sizes:
                g.add_edge(o, r)
    for o, flags in roots:
        if o in sizes and not flags & 2:
            g.add_edge(SUPER, o)
    idom = nx.immediate_dominators(g, SUPER)
    children = {}
    for v, d in idom.items():
        if v != SUPER:
            children.setdefault(d, []).append(v)
    retained, count = {}, {}
    order = [SUPER]
    for v in order:
        order.extend(children.get(v, []))
    for v in reversed(order):
        if v == SUPER:
            continue
        retained[v] = sizes[v] + sum(retained[c] for c in children.get(v, []))
        count[v] = 1 + sum(count[c] for c in children.get(v, []))

    out = subprocess.run([binary, "report", path, "--json", "--objects", "--duplicates", "none"],
                         check=True, capture_output=True).stdout
    report = json.loads(out)
    bad = 0
    for row in report["objects"]:
        oid = int(row["id"], 16)
        if oid in idom:
            d = idom[oid]
            want = None if d == SUPER else format(d, "x")
            got = (row["reachable"], row.get("idom"), row["retained_bytes"], row["retained_objects"])
            exp = (True, want, retained[oid], count[oid])
        else:
            got = (row["reachable"], "idom" in row, row["retained_bytes"])
            exp = (False, False, 0)
        if got != exp:
            bad += 1
            if bad <= 5:
                print(f"  {row['id']}: heaptui {got}, networkx {exp}")
    reachable = len(idom) - (1 if SUPER in idom else 0)
    print(f"{path}: {len(report['objects'])} objects, {reachable} reachable, {bad} disagreements")
    return bad


if __name__ == "__main__":
    sys.exit(1 if any(main(p) for p in sys.argv[1:]) else 0)
