#!/usr/bin/env bash
# Crash proof on both engines: SIGKILL during turns, card resolutions and dispatches,
# then an audit (see crash.py). Needs the debug server built (`cargo build -p luna-server`).
#
#   end2end/crash/run.sh [trials]        # default 100 per engine
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/end2end/.venv"
trials="${1:-100}"
AIOSMTPD_VERSION=1.4.6
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('aiosmtpd') != '$AIOSMTPD_VERSION')" 2>/dev/null; then
  [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q "aiosmtpd==$AIOSMTPD_VERSION"
fi
cd "$root"
server="${CARGO_TARGET_DIR:-target}/debug/luna-server"
pg_base=$(./.ci/postgres)
for engine in sqlite postgres; do
  work="$(mktemp -d)"
  port=$((2600 + RANDOM % 300))
  "$venv/bin/python" -m aiosmtpd -n -l "127.0.0.1:$port" -c aiosmtpd.handlers.Mailbox "$work/maildir" \
    >"$work/smtp.log" 2>&1 &
  smtp=$!
  for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  url=""
  if [ "$engine" = postgres ]; then
    db="luna_crash_$$"
    psql "${pg_base%/*}/postgres" -qc "drop database if exists $db" -c "create database $db" >/dev/null
    url="${pg_base%/*}/$db"
  fi
  status=0
  python3 "$here/crash.py" --server "$server" --engine "$engine" --database-url "$url" \
    --smtp-url "smtp://127.0.0.1:$port" --maildir "$work/maildir" --trials "$trials" || status=$?
  kill $smtp 2>/dev/null || true
  [ $status = 0 ] || exit $status
done
