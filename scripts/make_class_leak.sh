#!/usr/bin/env bash
# Makes two heap dumps of one process whose class `ClassLeak$OrderService`
# holds a growing HashMap in a static field (fixtures/ClassLeak.java):
#
#   scripts/make_class_leak.sh OUT_PREFIX
#
# writes OUT_PREFIX.1.hprof.gz (500 orders) and OUT_PREFIX.2.hprof.gz
# (1000 orders), each by `jcmd PID GC.heap_dump` (which runs a full GC
# first), gzipped. Class data sharing is off: the dumps are a quarter of
# the size.
set -euo pipefail
out=$1
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
javac -d "$tmp" "$here/fixtures/ClassLeak.java"
mkfifo "$tmp/in"
java -Xmx16m -Xshare:off -XX:+UseSerialGC -cp "$tmp" ClassLeak < "$tmp/in" > "$tmp/out" &
pid=$!
exec 3> "$tmp/in"
wait_for() {
    for _ in $(seq 100); do
        grep -q "ready $1" "$tmp/out" 2>/dev/null && return
        sleep 0.1
    done
    echo "ClassLeak did not reach $1 orders" >&2
    exit 1
}
for n in 1 2; do
    wait_for $((n * 500))
    rm -f "$out.$n.hprof"
    jcmd "$pid" GC.heap_dump "$(realpath -m "$out.$n.hprof")" > /dev/null
    gzip -9f "$out.$n.hprof"
    echo more >&3
done
exec 3>&-
wait "$pid" 2>/dev/null || true
pid=
ls -l "$out".*.hprof.gz
