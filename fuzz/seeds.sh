#!/bin/sh
# Fills fuzz/corpus/<target> with seed inputs from the fixtures (run from
# the repository root after `cargo build`): the importers' fixtures, cut
# under the fuzz targets' 1 MiB cap, and reopen-cache files of two small dumps,
# rewritten for the key `fuzz` the cache target reads them with.
set -e
c=fuzz/corpus
mkdir -p $c/rpm $c/hprof $c/heapsnapshot $c/gcdump $c/cache
cp fixtures/*.txt $c/rpm/
# The hprof, heapsnapshot and gcdump targets put the format's first bytes
# in front of their input themselves: their seeds start after them.
python3 - <<'PY'
import gzip
c = 'fuzz/corpus'
h = gzip.open('fixtures/leaky.hprof.gz').read()
open(c + '/hprof/leaky-head300k', 'wb').write(h[19:300000])
s = gzip.open('fixtures/node_leak.heapsnapshot.gz').read()
i = s.index(b'"snapshot":') + len(b'"snapshot":')
open(c + '/heapsnapshot/node_leak-900k', 'wb').write(s[i:i + 900000])
# Short ones too (the header, then the start of the nodes array): they run
# hundreds of times faster, so the number scanner's windows get explored.
n = s.index(b'"nodes":[')
for k in (2000, 20000):
    open(c + '/heapsnapshot/node_leak-%dk' % (k // 1000), 'wb').write(s[i:n + k])
# The crafted shapes of docs/bounds.md, small: HPROF superclass chains and
# cycles, one loader id in many records; a V8 snapshot with more node types
# than heaptui keeps; text dumps of repeated roots and of bidi controls.
import struct
def rec(tag, body):
    return bytes([tag]) + struct.pack('>II', 0, len(body)) + body
def hprof(classes, cycle=False, loader_repeats=0):
    out = struct.pack('>IQ', 8, 0) + rec(1, struct.pack('>Q', 1) + b'f')
    seg = b''
    for k in range(1, classes + 1):
        out += rec(1, struct.pack('>Q', 1000 + k) + b'C%d' % k)
        out += rec(2, struct.pack('>IQIQ', 1, k << 8, 0, 1000 + k))
        sup = (classes << 8 if cycle else 0) if k == 1 else (k - 1) << 8
        loader = 5 if loader_repeats else 0
        seg += b'\x20' + struct.pack('>QIQQQQQQIHHH', k << 8, 0, sup, loader, 0, 0, 0, 0, 0, 0, 0, 1)
        seg += struct.pack('>QB', 1, 2)
    for _ in range(loader_repeats):
        seg += b'\x21' + struct.pack('>QIQI', 5, 0, 1 << 8, 8) + struct.pack('>Q', 5)
    seg += b'\x21' + struct.pack('>QIQI', 7, 0, classes << 8, 8 * classes) + struct.pack('>Q', 7) * classes
    seg += b'\xff' + struct.pack('>Q', 7)
    return out + rec(0x1c, seg) + rec(0x2c, b'')
open(c + '/hprof/crafted-chain', 'wb').write(hprof(300))
open(c + '/hprof/crafted-cycle', 'wb').write(hprof(300, cycle=True))
open(c + '/hprof/crafted-loader', 'wb').write(hprof(50, loader_repeats=200))
types = ','.join('"t%d"' % k for k in range(259))
v8 = ('{"meta":{"node_fields":["type","name","id","self_size","edge_count"],'
      '"node_types":[[%s],"string","number","number","number"],'
      '"edge_fields":["type","name_or_index","to_node"],'
      '"edge_types":[["context","element","property"],"string_or_number","node"]},'
      '"node_count":3,"edge_count":2},"nodes":[0,0,1,8,2,258,0,3,8,0,254,0,5,8,0],'
      '"edges":[2,0,5,2,0,10],"strings":["x"]}') % types
open(c + '/heapsnapshot/crafted-259-node-types', 'w').write(v8)
roots = 't 1 Foo\n' + ''.join('o %x 1 16\n' % o for o in range(1, 200))
roots += ''.join('r %x %d 0\n' % (o, o % 3) for o in range(1, 200)) * 5
open(c + '/rpm/crafted-repeated-roots.txt', 'w').write(roots)
open(c + '/rpm/crafted-bidi.txt', 'w').write(
    't 1 Evil\u202egpj.exe\u200b\u200d' + 'e' + '\u0301' * 40 + '\no 10 1 8\nr 10 1 0\n')
# Two copies of a 300-node list with a leaf under each node: 300 nested
# duplicate sets (the held sets' ordered pass) and one set of leaves.
lst = 't 1 Node\nt 2 Leaf\n'
for copy in (1, 2):
    base = copy << 20
    for d in range(300):
        nxt = ' %x' % (base + d + 1) if d + 1 < 300 else ''
        leaf = base + 0x80000 + d
        lst += 'o %x 1 16 %x%s\no %x 2 24\n' % (base + d, leaf, nxt, leaf)
    lst += 'r %x 1 0\n' % base
open(c + '/rpm/crafted-duplicated-list.txt', 'w').write(lst)
g = open('fixtures/perfview_test1.gcdump', 'rb').read()
j = g.index(b'!FastSerialization.1') + 20
open(c + '/gcdump/perfview_test1', 'wb').write(g[j:])
PY
tmp=$(mktemp -d)
for d in suspects dominator_shapes; do
  XDG_CACHE_HOME=$tmp HEAPTUI_CACHE_MIN=0 target/debug/heaptui report fixtures/$d.txt > /dev/null
done
for f in "$tmp"/heaptui/*; do
  python3 fuzz/rekey_cache.py "$f" $c/cache/"$(basename "$f")"
done
rm -rf "$tmp"
