"""Drives Luna's /mcp endpoint with the official MCP Python SDK (PyPI `mcp`).

Usage: check_mcp.py <base_url> <api_key_with_every_scope> <revoked_api_key> <read_only_api_key>

Checks: tools/list returns exactly the public catalog with input schemas and
annotations (and prints its size) to a key with every scope, and only the read tools
to a read-only key; `usage` returns structured content plus the same
JSON as text; a bad argument comes back as a typed error (isError, INVALID_ARGUMENT
with allowed_values); a legacy name carries next_action; a revoked key gets HTTP 401.
Exits non-zero on the first failure.
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

# SPEC §5 "The catalog": exactly these 25 tools are public over MCP.
EXPECTED_PUBLIC = {
    "market_capabilities", "market_search", "market_get", "market_count", "market_aggregate",
    "market_history", "market_compare", "market_screen",
    "context_retrieve", "context_get", "context_create", "context_update", "context_delete",
    "collection_query", "crm_record",
    "company_search", "company_save", "people_search", "people_quote", "people_acquired",
    "people_reveal", "people_file", "people_status",
    "usage", "workspaces",
}


def fail(msg: str) -> None:
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond: bool, msg: str) -> None:
    if not cond:
        fail(msg)
    print(f"ok   {msg}")


def client_for(url: str, key: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30)
    return Client(streamable_http_client(url, http_client=http))


# Tools that write, reveal or delete: a read-only key never sees them listed.
NEEDS_SCOPE = {"people_reveal", "company_save", "crm_record", "people_file",
               "context_create", "context_update", "context_delete"}


async def main(base: str, key: str, revoked: str, read_only: str) -> None:
    url = base.rstrip("/") + "/mcp"
    async with client_for(url, read_only) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        check(names == EXPECTED_PUBLIC - NEEDS_SCOPE,
              f"a read-only key lists only the read tools: {sorted(names ^ (EXPECTED_PUBLIC - NEEDS_SCOPE))}")
    async with client_for(url, key) as client:
        listed = await client.list_tools()
        tools = listed.tools
        names = [t.name for t in tools]
        check(set(names) == EXPECTED_PUBLIC and len(names) == 25,
              f"tools/list is the 25-tool public catalog: {sorted(set(names) ^ EXPECTED_PUBLIC)}")
        check(not any(n.startswith(("driftless_", "brein_")) for n in names), "no legacy alias is listed")
        check(len(names) == len(set(names)), "no duplicates")
        for t in tools:
            schema = t.input_schema if hasattr(t, "input_schema") else t.inputSchema
            check(schema.get("additionalProperties") is False and "required" in schema,
                  f"{t.name}: closed input schema with required")
            check(t.description.startswith("Úsala cuando"), f"{t.name}: description opens with Úsala cuando")
            ann = t.annotations
            check(ann is not None and ann.read_only_hint is not None and ann.idempotent_hint is not None,
                  f"{t.name}: annotations present")
        size = len(json.dumps({"tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]},
                              ensure_ascii=False).encode("utf-8"))
        print(f"tools/list: {len(tools)} tools, {size} bytes")
        check(size < 80 * 1024, "tools/list under 80 KiB")

        usage = await client.call_tool("usage", {})
        check(not usage.is_error, "usage succeeds")
        sc = usage.structured_content
        check(isinstance(sc, dict) and sc["status"] == "ok" and sc["ref"].startswith("call:"), "usage envelope")
        row = sc["results"][0]
        check(row["ref"].startswith("workspace:") and "intelligence_credits_left" in row
              and "contact_credits_left" in row and "reads_left_this_hour" in row, "usage fields")
        check(json.loads(usage.content[0].text) == sc, "text content is the same JSON")

        bad = await client.call_tool("usage", {"estado": "Jalisco"})
        check(bad.is_error is True, "bad argument is isError")
        err = bad.structured_content["error"]
        check(err["code"] == "INVALID_ARGUMENT" and "allowed_values" in err and "«estado»" in err["message"],
              f"bad argument is a typed error: {err}")

        unknown = await client.call_tool("broker", {})
        check(unknown.is_error and unknown.structured_content["error"]["code"] == "UNKNOWN_TOOL",
              "deleted tool is UNKNOWN_TOOL")

        legacy = await client.call_tool("driftless_usage", {})
        check(not legacy.is_error and "usage" in legacy.structured_content.get("next_action", ""),
              "legacy alias works and names its replacement")

    # A revoked key: HTTP 401 on the wire, and the official client cannot connect.
    async with httpx2.AsyncClient(timeout=30) as raw:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "check", "version": "0"}}}
        resp = await raw.post(url, json=init, headers={"Authorization": f"Bearer {revoked}",
                                                       "Accept": "application/json, text/event-stream"})
        check(resp.status_code == 401, f"revoked key gets 401 (got {resp.status_code})")
        check(resp.json()["error"]["code"] == "UNAUTHORIZED", "401 body is the uniform error")
        resp = await raw.post(url, json=init, headers={"Accept": "application/json, text/event-stream"})
        check(resp.status_code == 401, "missing key gets 401")
        resp = await raw.post(url, json=init, headers={"Authorization": f"Bearer {key}", "Origin": "https://evil.example",
                                                       "Accept": "application/json, text/event-stream"})
        check(resp.status_code == 403, "foreign Origin gets 403")
    try:
        async with client_for(url, revoked) as client:
            await client.list_tools()
        fail("the client connected with a revoked key")
    except SystemExit:
        raise
    except BaseException as e:  # the SDK raises its own error type (or an ExceptionGroup)
        print(f"ok   client refuses a revoked key ({type(e).__name__})")
    print("MCP end-to-end: all checks passed")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]))
