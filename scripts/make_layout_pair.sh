#!/usr/bin/env bash
# Makes a heap dump and the JVM's own class histogram of the same idle
# moment, for checking heaptui's sizes against the JVM's:
#
#   scripts/make_layout_pair.sh OUT_PREFIX [JVM FLAGS...]
#
# compiles fixtures/Layouts.java, runs it with a small heap under the given
# flags (e.g. -XX:-UseCompressedOops; class data sharing is off unless the
# flags say -Xshare:auto, which halves the dump), and once it is idle writes
# OUT_PREFIX.histo.txt (`jcmd PID GC.class_histogram`) and
# OUT_PREFIX.hprof.gz (`jcmd PID GC.heap_dump`, gzipped). Both commands
# run a full GC first; between them the attach mechanism allocates a few
# objects of its own (tests/core/layouts.rs names them).
set -euo pipefail
out=$1; shift
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
javac --add-exports java.base/jdk.internal.vm.annotation=ALL-UNNAMED \
    -d "$tmp" "$here/fixtures/Layouts.java"
java -Xmx16m -Xshare:off -XX:-RestrictContended "$@" -cp "$tmp" Layouts > "$tmp/out" &
pid=$!
for _ in $(seq 100); do
    grep -q ready "$tmp/out" 2>/dev/null && break
    sleep 0.1
done
grep -q ready "$tmp/out" || { echo "Layouts did not start" >&2; exit 1; }
sleep 1
jcmd "$pid" GC.class_histogram > "$out.histo.txt"
rm -f "$out.hprof"
jcmd "$pid" GC.heap_dump "$(realpath -m "$out.hprof")" > /dev/null
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
gzip -9f "$out.hprof"
ls -l "$out.hprof.gz" "$out.histo.txt"
