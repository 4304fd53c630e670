#!/usr/bin/env bash
# The terminal UI's peak memory on a dump: runs heaptui in a detached tmux
# session of the given size under GNU time, waits until the status line
# says "ready" (the duplicates done, the inspector's label index built),
# quits with q and prints GNU time's line (peak RSS in KiB first).
# Needs tmux and GNU time (/usr/bin/time).
#
#   scripts/tui_peak.sh BINARY DUMP [COLUMNSxROWS] [heaptui options...]
#
# The options default to `--no-cache --memory none`, so the analysis runs
# in memory and nothing is read from or written to the reopen cache.
set -euo pipefail
bin=$1
dump=$2
size=${3:-160x45}
shift $(($# < 3 ? $# : 3))
opts=("$@")
[ ${#opts[@]} -eq 0 ] && opts=(--no-cache --memory none)
session=tui-peak-$$
out=$(mktemp)
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -f "$out"' EXIT
tmux new-session -d -s "$session" -x "${size%x*}" -y "${size#*x}" \
    "/usr/bin/time -f '%M KiB peak, %U s user, %S s sys, %e s wall' -o '$out' \
    $(printf '%q ' "$bin" "$dump" "${opts[@]}")"
for _ in $(seq 1 7200); do
    sleep 0.5
    if tmux capture-pane -p -t "$session" 2>/dev/null | grep -q ' ready'; then
        break
    fi
done
sleep 1
tmux send-keys -t "$session" q
for _ in $(seq 1 20); do
    [ -s "$out" ] && break
    sleep 0.5
done
cat "$out"
