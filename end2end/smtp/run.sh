#!/usr/bin/env bash
# Sends real sequence steps through SMTP to an aiosmtpd server started here (PyPI,
# pinned), then checks what the server received (headers, bodies, the unsubscribe
# headers) and how refusals are handled: the handler in refusing.py answers 550 for
# recipients whose address starts with «rebota» and 451 for «demora».
#
#   end2end/smtp/run.sh
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/end2end/.venv"
port="${LUNA_SMTP_PORT:-2526}"

AIOSMTPD_VERSION=1.4.6
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('aiosmtpd') != '$AIOSMTPD_VERSION')" 2>/dev/null; then
  [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q "aiosmtpd==$AIOSMTPD_VERSION"
fi

work="$(mktemp -d)"
cleanup() {
  if [[ -n "${smtp_pid:-}" ]]; then kill "$smtp_pid" 2>/dev/null || true; wait "$smtp_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# A real SMTP server that stores every message it accepts in a maildir.
PYTHONPATH="$here" "$venv/bin/python" -m aiosmtpd -n -l "127.0.0.1:$port" -c refusing.Refusing "$work/maildir" \
  >"$work/smtp.log" 2>&1 &
smtp_pid=$!
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done

cd "$root"
LUNA_TEST_SMTP_URL="smtp://127.0.0.1:$port" LUNA_TEST_MAILDIR="$work/maildir" \
  cargo test -q -p luna-engine --test smtp -- --ignored --nocapture
