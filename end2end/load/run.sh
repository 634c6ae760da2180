#!/usr/bin/env bash
# Load proof (issue 12): 1,000 concurrent websocket sessions on one luna-server with
# turns running on the local director; prints memory per idle session, p50/p99 event
# delivery latency and every error or dropped event, and exits non-zero if there was
# any. See server/benches/load/ (main.rs, args.rs) for the shape and the options.
#
#   end2end/load/run.sh [sqlite|postgres] [bench options…]
#   end2end/load/run.sh sqlite --sockets 1000 --turn-sessions 200 --turns-per-session 3
#
# Each socket is a file descriptor in the bench and another in the server: the open-
# files limit is raised to 65536 (or the hard limit) for both (the server inherits it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
engine="sqlite"
if [[ "${1:-}" == sqlite || "${1:-}" == postgres ]]; then
  engine="$1"
  shift
fi
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
echo "open files limit: $(ulimit -n)"
args=()
if [ "$engine" = postgres ]; then
  pg_base=$(./.ci/postgres)
  db="luna_load_$$"
  psql "${pg_base%/*}/postgres" -qc "drop database if exists $db" -c "create database $db" >/dev/null
  args+=(--database-url "${pg_base%/*}/$db")
  # The run's database is dropped afterwards, whatever the outcome.
  trap 'psql "${pg_base%/*}/postgres" -qc "drop database if exists $db" >/dev/null' EXIT
fi
cargo bench -p luna-server --bench load -- "${args[@]}" "$@"
