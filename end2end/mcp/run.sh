#!/usr/bin/env bash
# Starts luna-server on a temporary database, creates an API key (and a revoked one),
# drives /mcp with the official Python MCP client, and exits non-zero on failure.
#
#   end2end/mcp/run.sh            # builds luna-server first
#   LUNA_BIN=/path/luna-server end2end/mcp/run.sh
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/end2end/.venv"
port="${LUNA_E2E_PORT:-3917}"

if [[ -z "${LUNA_BIN:-}" ]]; then
  (cd "$root" && cargo build -q -p luna-server)
  target="${CARGO_TARGET_DIR:-$root/target}"
  LUNA_BIN="$target/debug/luna-server"
fi
# The official MCP Python SDK, pinned; installed once into a git-ignored venv.
MCP_VERSION=2.3.0
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$MCP_VERSION')" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "mcp==$MCP_VERSION"
fi

work="$(mktemp -d)"
# A private copy: other builds may replace the shared target's binary meanwhile.
cp "$LUNA_BIN" "$work/luna-server"
export LUNA_DATA_DIR="$work/data" LUNA_BIND="127.0.0.1:$port" LUNA_DEMO=true RUST_LOG="${RUST_LOG:-warn}"
cleanup() {
  if [[ -n "${server_pid:-}" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

admin="duena@demo.luna.mx"
mapfile -t key < <("$work/luna-server" create-api-key --email "$admin" --name e2e \
  --scopes contacts:reveal,crm:write,knowledge:write,knowledge:delete 2>/dev/null)
mapfile -t lectura < <("$work/luna-server" create-api-key --email "$admin" --name lectura 2>/dev/null)
mapfile -t old < <("$work/luna-server" create-api-key --email "$admin" --name revocada 2>/dev/null)
"$work/luna-server" revoke-api-key --email "$admin" --id "${old[1]}" 2>/dev/null

"$work/luna-server" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  if curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; then break; fi
  sleep 0.1
done

if ! "$venv/bin/python" "$here/check_mcp.py" "http://127.0.0.1:$port" "${key[0]}" "${old[0]}" "${lectura[0]}"; then
  echo "--- server log ---" >&2; tail -50 "$work/server.log" >&2
  exit 1
fi
