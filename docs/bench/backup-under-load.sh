#!/usr/bin/env bash
# docs/bench/backup-under-load.sh [WRITERS] [SECONDS]: how long writers wait
# while canvasd backup runs. It serves a new data directory with the canvasd
# binary, fills it with SECONDS of writes, then keeps WRITERS clients
# sending synchronous completions (each one a run record: a durable write)
# and publishes while `canvasd backup` runs, and prints the write latency
# measured by curl inside the backup's window and outside it. Needs curl
# and jq.
set -euo pipefail
cd "$(dirname "$0")/../.."
writers="${1:-8}"
fill="${2:-20}"
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  wait 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/canvasd" ./cmd/canvasd
key="$(cat /proc/sys/kernel/random/uuid)"
CANVAS_BOOTSTRAP_API_KEY="$key" "$work/canvasd" serve --data "$work/data" --addr 127.0.0.1:0 \
  --rate-per-key 0 > "$work/serve.out" 2> "$work/serve.log" &
pids+=($!)
for _ in $(seq 1 100); do grep -q '^listening on ' "$work/serve.out" && break; sleep 0.1; done
url="http://$(sed -n 's/^listening on //p' "$work/serve.out")"
api() { curl -sf -X "$1" "$url$2" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -H 'x-compatibility-date: 2025-01-01' ${3:+-d "$3"}; }
project="$(api POST /projects '{"name":"bench"}' | jq -r .id)"
canvas="$(api POST /prompt "{\"title\":\"bench\",\"projectId\":\"$project\"}" | jq -r .id)"
version="$(api POST /prompt-version "{\"promptId\":\"$canvas\",\"configuration\":{\"model\":\"echo\"},\"message\":{\"role\":\"system\",\"content\":\"Hello {{name}}\"}}" | jq -r .id)"
api POST /environment/publish "{\"resourceType\":\"prompt\",\"resourceId\":\"$canvas\",\"envName\":\"production\",\"versionId\":\"$version\"}" > /dev/null

# writer N: one line per write: the end time in ms, the latency in ms, the
# status.
writer() {
  local i=0 body
  while :; do
    i=$((i + 1))
    if [ $((i % 10)) -eq 0 ]; then
      body="{\"resourceType\":\"prompt\",\"resourceId\":\"$canvas\",\"envName\":\"production\",\"versionId\":\"$version\"}"
      path=/environment/publish
    else
      body="{\"canvas_id\":\"$canvas\",\"variables\":{\"name\":\"w$1-$i\"}}"
      path=/v2/chat/completions
    fi
    curl -s -o /dev/null -w '%{time_total} %{http_code}\n' -X POST "$url$path" -H "Authorization: Bearer $key" \
      -H 'Content-Type: application/json' -H 'x-compatibility-date: 2025-01-01' -d "$body" |
      while read -r t code; do echo "$(date +%s%3N) $(awk -v t="$t" 'BEGIN{printf "%.1f", t*1000}') $code"; done
  done
}
for n in $(seq 1 "$writers"); do writer "$n" > "$work/lat.$n" & pids+=($!); done
sleep "$fill"
start="$(date +%s%3N)"
"$work/canvasd" backup --data "$work/data" --to "$work/backup" > "$work/backup.out" 2> /dev/null
end="$(date +%s%3N)"
sleep 3
for p in "${pids[@]:1}"; do kill "$p" 2> /dev/null || true; done

echo "writers: $writers, fill: ${fill}s, database: $(du -h "$work/backup/canvas.db" | cut -f1), backup: $((end - start)) ms"
cat "$work/backup.out"
for w in during outside; do
  cat "$work"/lat.* | awk -v s="$start" -v e="$end" -v w="$w" '
    { during = ($1 - $2 <= e && $1 >= s) } (w == "during") == during { print $2, $3 }' |
    sort -n | awk -v w="$w" '
      { lat[NR] = $1; if ($2 !~ /^2/) bad++ }
      END { if (NR) printf "%-8s writes %6d  p50 %6.1f ms  p99 %6.1f ms  max %6.1f ms  non-2xx %d\n",
        w, NR, lat[int(NR * 0.5) + 1], lat[int(NR * 0.99) + 1], lat[NR], bad + 0 }'
done
