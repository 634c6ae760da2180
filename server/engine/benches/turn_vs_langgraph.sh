#!/usr/bin/env bash
# Luna's 8-step scripted turn (benches/turn.rs) against the same loop in LangGraph
# (benches/langgraph/turn_loop.py, SqliteSaver, durability "sync"), alternated ROUNDS
# times so both see the same machine load. Prints each run's p50/p95 and the ratio of
# the median p50s. Not part of CI.
#
#   python3 -m venv /tmp/lg && /tmp/lg/bin/pip install langgraph langgraph-checkpoint-sqlite
#   PYTHON=/tmp/lg/bin/python server/engine/benches/turn_vs_langgraph.sh
#
# ROUNDS (default 5) and TURNS (default 100 per run) change the sample.
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROUNDS=${ROUNDS:-5}
TURNS=${TURNS:-100}
PYTHON=${PYTHON:-python3}
cargo bench -p luna-engine --bench turn --no-run 2>/dev/null
BIN=$(cargo bench -p luna-engine --bench turn --no-run --message-format=json 2>/dev/null \
  | grep '"name":"turn"' | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
out=$(mktemp)
for r in $(seq 1 "$ROUNDS"); do
  LUNA_BENCH_JSON=1 LUNA_BENCH_TURNS=$TURNS "$BIN" | tail -1 | tee -a "$out"
  "$PYTHON" server/engine/benches/langgraph/turn_loop.py --turns "$TURNS" | tail -1 | tee -a "$out"
done
"$PYTHON" - "$out" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
p50 = {e: statistics.median(r["p50_ms"] for r in runs if r["engine"] == e) for e in ("luna", "langgraph")}
p95 = {e: statistics.median(r["p95_ms"] for r in runs if r["engine"] == e) for e in ("luna", "langgraph")}
for e in p50:
    print(f"{e:10s} median p50 {p50[e]:7.2f} ms   median p95 {p95[e]:7.2f} ms")
print(f"LangGraph / Luna (p50): {p50['langgraph'] / p50['luna']:.1f}x")
PY
