#!/usr/bin/env bash
# Makes a large Java HPROF heap dump for benchmarking the HPROF importer
# (not committed: hundreds of MB). Needs a JDK (javac, java, jcmd).
#
#   scripts/make_big_hprof.sh [OUT.hprof] [ITERATIONS]
#
# ITERATIONS (default 2,000,000) rounds of: a HashMap entry with an Integer
# key and a String value (1000 distinct texts: many duplicate strings), an
# int[] every 4th round, a 2-element LinkedList every 8th: about 5 objects
# per round, so the default gives about 10 million objects (a 0.41 GB
# dump); 26000000 gives the 5 GB benchmark dump (about 127 million
# objects). The JVM's heap is sized from ITERATIONS (400 bytes a round,
# at least 4 GB): the 5 GB dump needs about 11 GB of memory and the
# dump's size free on disk.
set -euo pipefail
out=${1:-/tmp/big.hprof}
n=${2:-2000000}
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cat > "$work/BigHeap.java" <<'JAVA'
import java.util.*;

public class BigHeap {
    static final List<Object> KEEP = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Map<Integer, String> map = new HashMap<>();
        Random r = new Random(1);
        for (int i = 0; i < n; i++) {
            map.put(i, "value-" + (i % 1000));
            if (i % 4 == 0) KEEP.add(new int[r.nextInt(8)]);
            if (i % 8 == 0) KEEP.add(new LinkedList<>(List.of(i, i + 1)));
        }
        KEEP.add(map);
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(3_600_000);
    }
}
JAVA
javac -d "$work" "$work/BigHeap.java"
heap_mb=$(( n / 1000000 * 400 + 1024 ))
[ "$heap_mb" -ge 4096 ] || heap_mb=4096
java -Xmx${heap_mb}m -XX:+UseParallelGC -cp "$work" BigHeap "$n" > "$work/log" 2>&1 &
pid=$!
until grep -q ready "$work/log"; do
    kill -0 "$pid" || { cat "$work/log"; exit 1; }
    sleep 1
done
rm -f "$out"
jcmd "$pid" GC.heap_dump "$out"
ls -l "$out"
