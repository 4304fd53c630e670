#!/usr/bin/env python3
"""Checks heaptui's retained sizes on Java HPROF dumps, with referents weak
(the default), against an independent computation.

For each dump this script reads the HPROF file itself (gzipped or not): the
class dumps, instances, object and primitive arrays and GC roots, and builds
the graph heaptui models (instance fields, array elements, the object->class
edge, a class's superclass, loader, signers, protection domain and static
references, a class loader's edges to the classes it defined), leaving out
the `referent` field of every instance whose class's superclass chain
reaches java.lang.ref.Reference. networkx computes the immediate dominators
from a super-root over the roots; retained sizes are summed over that tree.
Only the objects' shallow sizes are taken from heaptui (`report --json
--objects`), so that the check does not depend on the size model. It also
counts the objects held only by references per kind (soft, weak,
finalizer, phantom; each object under the strongest kind it is reachable
through) and compares them with the report's `held_by_references`.

    scripts/check_referents.py [--heaptui BIN] DUMP...

Exit status 0 when every dump agrees. Needs networkx (`pip install networkx`).
"""

import argparse
import gzip
import json
import struct
import subprocess
import sys

import networkx as nx

PRIM_SIZE = {4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8}
KINDS = ["soft", "weak", "finalizer", "phantom"]
KIND_OF_CLASS = {
    "java/lang/ref/SoftReference": 0,
    "java/lang/ref/WeakReference": 1,
    "java/lang/ref/FinalReference": 2,
    "java/lang/ref/FinalizerReference": 2,
    "java/lang/ref/PhantomReference": 3,
}


def read_dump(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw


class Hprof:
    def __init__(self, data):
        end = data.index(b"\0")
        self.data = data
        self.ids = struct.unpack(">I", data[end + 1:end + 5])[0]
        self.idfmt = ">I" if self.ids == 4 else ">Q"
        self.strings = {}
        self.class_name = {}  # class id -> name (JVM form)
        self.classes = {}  # class id -> (super, loader, signers, pd, statics, fields)
        self.objects = {}  # id -> list of (target, is_referent) ; first record wins
        self.instances = []  # (id, class id, field bytes)
        self.roots = []  # (id, weak)
        pos = end + 1 + 4 + 8
        while pos + 9 <= len(data):
            tag = data[pos]
            length = struct.unpack(">I", data[pos + 5:pos + 9])[0]
            body = pos + 9
            if tag == 0x01:
                sid = self.id_at(body)
                self.strings[sid] = data[body + self.ids:body + length].decode("utf-8", "replace")
            elif tag == 0x02:
                cid = self.id_at(body + 4)
                name = self.id_at(body + 8 + self.ids)
                self.class_name[cid] = name
            elif tag in (0x0C, 0x1C):
                self.heap(body, min(body + length, len(data)))
            pos = body + length
        # Some writers name classes in Java form (java.lang.Object).
        self.class_name = {c: self.strings.get(n, "").replace(".", "/")
                           for c, n in self.class_name.items()}

    def id_at(self, p):
        return struct.unpack(self.idfmt, self.data[p:p + self.ids])[0]

    def heap(self, p, end):
        d, n = self.data, self.ids
        root_sizes = {0xFF: n, 0x01: 2 * n, 0x02: n + 8, 0x03: n + 8, 0x04: n + 4, 0x05: n,
                      0x06: n + 4, 0x07: n, 0x08: n + 8, 0x89: n, 0x8A: n, 0x8B: n, 0x8C: n,
                      0x8D: n, 0x8E: n + 8, 0x90: n}
        while p < end:
            t = d[p]
            p += 1
            if t in root_sizes:
                self.roots.append((self.id_at(p), t == 0x90))
                p += root_sizes[t]
            elif t == 0x20:
                cid = self.id_at(p)
                q = p + n + 4
                sup, loader, signers, pd = (self.id_at(q + i * n) for i in range(4))
                q += 6 * n + 4
                cp = struct.unpack(">H", d[q:q + 2])[0]
                q += 2
                for _ in range(cp):
                    ty = d[q + 2]
                    q += 3 + (n if ty == 2 else PRIM_SIZE[ty])
                statics = []
                ns = struct.unpack(">H", d[q:q + 2])[0]
                q += 2
                for _ in range(ns):
                    name, ty = self.id_at(q), d[q + n]
                    q += n + 1
                    if ty == 2:
                        statics.append(self.id_at(q))
                        q += n
                    else:
                        q += PRIM_SIZE[ty]
                fields = []
                nf = struct.unpack(">H", d[q:q + 2])[0]
                q += 2
                for _ in range(nf):
                    fields.append((self.id_at(q), d[q + n]))
                    q += n + 1
                if cid not in self.classes:
                    self.classes[cid] = (sup, loader, signers, pd, statics, fields)
                    self.add(cid, [(x, False) for x in (sup, loader, signers, pd, *statics)])
                p = q
            elif t == 0x21:
                oid, cid = self.id_at(p), self.id_at(p + n + 4)
                ln = struct.unpack(">I", d[p + 2 * n + 4:p + 2 * n + 8])[0]
                body = p + 2 * n + 8
                if oid not in self.objects:
                    self.instances.append((oid, cid, d[body:body + ln]))
                    self.objects[oid] = None  # filled in once every class is known
                p = body + ln
            elif t == 0x22:
                oid = self.id_at(p)
                ln = struct.unpack(">I", d[p + n + 4:p + n + 8])[0]
                cid = self.id_at(p + n + 8)
                body = p + 2 * n + 8
                elems = [self.id_at(body + i * n) for i in range(ln)]
                self.add(oid, [(x, False) for x in elems] + [(cid, False)])
                p = body + ln * n
            elif t in (0x23, 0xC3):
                oid = self.id_at(p)
                ln = struct.unpack(">I", d[p + n + 4:p + n + 8])[0]
                ty = d[p + n + 8]
                self.add(oid, [])
                p += n + 9 + (ln * PRIM_SIZE[ty] if t == 0x23 else 0)
            elif t == 0xFE:
                p += 4 + n
            else:
                raise ValueError(f"unknown sub-record 0x{t:02x} at {p - 1}")

    def add(self, oid, edges):
        if oid not in self.objects:
            self.objects[oid] = edges

    def kind_of(self, cid):
        """The strength of a class's referent: None when not a Reference."""
        found, seen = None, set()
        while cid and cid in self.classes and cid not in seen:
            seen.add(cid)
            name = self.class_name.get(cid, "")
            if name == "java/lang/ref/Reference":
                return 1 if found is None else found
            if found is None and name in KIND_OF_CLASS:
                found = KIND_OF_CLASS[name]
            cid = self.classes[cid][0]
        return None

    def finish(self):
        """Instances' edges; the referents apart: (reference, referent, kind)."""
        n = self.ids
        referents = []
        loaded = {}
        for cid, c in self.classes.items():
            if c[1]:
                loaded.setdefault(c[1], []).append(cid)
        for oid, cid, body in self.instances:
            edges, q = [], 0
            kind = self.kind_of(cid)
            k = cid
            seen = set()
            while k and k in self.classes and k not in seen:
                seen.add(k)
                owner_is_reference = self.class_name.get(k) == "java/lang/ref/Reference"
                for name, ty in self.classes[k][5]:
                    if ty == 2:
                        target = self.id_at_bytes(body, q)
                        q += n
                        if target is None:
                            break
                        if kind is not None and owner_is_reference and self.strings.get(name) == "referent":
                            if target:
                                referents.append((oid, target, kind))
                        else:
                            edges.append((target, False))
                    else:
                        q += PRIM_SIZE[ty]
                k = self.classes[k][0]
            edges.append((cid, False))
            for c in loaded.get(oid, []):
                edges.append((c, False))
            self.objects[oid] = edges
        return referents

    def id_at_bytes(self, body, q):
        if q + self.ids > len(body):
            return None
        return struct.unpack(self.idfmt, body[q:q + self.ids])[0]


def check(path, heaptui):
    h = Hprof(read_dump(path))
    referents = h.finish()
    out = subprocess.run([heaptui, "report", "--json", "--objects", "--top", "0",
                          "--duplicates", "none", "--no-cache", path],
                         check=True, capture_output=True).stdout
    report = json.loads(out)
    size = {int(o["id"], 16): o["shallow_bytes"] for o in report["objects"]}
    retained = {int(o["id"], 16): o.get("retained_bytes") for o in report["objects"] if o["reachable"]}
    missing = set(size) ^ set(h.objects)
    if missing:
        print(f"{path}: the object sets differ ({len(missing)} ids)")
        return False
    g = nx.DiGraph()
    g.add_nodes_from(h.objects)
    for o, edges in h.objects.items():
        for t, _ in edges:
            if t in h.objects and t != 0:
                g.add_edge(o, t)
    root = "super-root"
    g.add_node(root)
    for r, weak in h.roots:
        if not weak and r in h.objects:
            g.add_edge(root, r)
    idom = nx.immediate_dominators(g, root)
    reachable = set(idom) - {root}
    # Retained sizes: each object's size added to every dominator above it,
    # children before parents (deepest first).
    depth = {root: 0}
    for v in nx.dfs_preorder_nodes(nx.DiGraph([(d, v) for v, d in idom.items() if v != root]), root):
        if v != root:
            depth[v] = depth[idom[v]] + 1
    mine = {v: size[v] for v in reachable}
    for v in sorted(reachable, key=lambda v: -depth[v]):
        if idom[v] != root:
            mine[idom[v]] += mine[v]
    bad = [v for v in reachable if retained.get(v) != mine[v]]
    bad += [v for v in retained if v not in reachable]
    # Held only by references, per kind, as the collector classifies them.
    by_from = {}
    for f, t, k in referents:
        by_from.setdefault(f, []).append((t, k))
    seen = set(reachable)
    held = []
    for level in range(4):
        stack = []
        for f, t, k in referents:
            if k <= level and f in seen and t in h.objects and t not in seen:
                seen.add(t)
                stack.append(t)
        objects = bytes_ = 0
        while stack:
            o = stack.pop()
            objects += 1
            bytes_ += size[o]
            nexts = [t for t, _ in h.objects[o]] + [t for t, k in by_from.get(o, []) if k <= level]
            for t in nexts:
                if t in h.objects and t not in seen:
                    seen.add(t)
                    stack.append(t)
        held.append((objects, bytes_))
    theirs = report["summary"].get("held_by_references") or {}
    theirs = [(theirs.get(k, {}).get("objects"), theirs.get(k, {}).get("bytes")) for k in KINDS]
    same_held = theirs == held
    print(f"{path}: {len(h.objects)} objects, {len(reachable)} reachable, "
          f"{len(referents)} referents; retained sizes "
          f"{'agree' if not bad else f'DIFFER for {len(bad)} objects'}; held only by references "
          + ", ".join(f"{k} {o} objects {b} B" for k, (o, b) in zip(KINDS, held))
          + f" ({'agrees' if same_held else f'heaptui says {theirs}'})")
    return not bad and same_held


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heaptui", default="target/release/heaptui")
    ap.add_argument("dumps", nargs="+")
    args = ap.parse_args()
    ok = all([check(p, args.heaptui) for p in args.dumps])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
