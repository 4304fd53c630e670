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
