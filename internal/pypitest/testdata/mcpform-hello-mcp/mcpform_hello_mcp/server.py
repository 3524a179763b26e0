"""mcpform-hello-mcp: an MCP server over stdio, one JSON-RPC message a line.

It answers initialize, tools/list and tools/call (one tool, greet, whose
text comes from its dependency mcpform-hello-dep), ignores notifications,
and answers any other request with -32601, as a legacy server does.
"""
import json
import sys

from mcpform_hello_dep import greeting

VERSION = "@VERSION@"
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

TOOL = {
    "name": "greet",
    "description": "Greets someone by name.",
    "inputSchema": {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    },
}


def answer(msg):
    method = msg.get("method")
    params = msg.get("params") or {}
    if method == "initialize":
        v = params.get("protocolVersion")
        return {
            "protocolVersion": v if v in LEGACY else "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "mcpform-hello-mcp", "version": VERSION},
        }
    if method == "tools/list":
        return {"tools": [TOOL]}
    if method == "tools/call":
        if params.get("name") != "greet":
            raise KeyError(params.get("name"))
        name = (params.get("arguments") or {}).get("name", "")
        return {"content": [{"type": "text", "text": greeting(name)}]}
    if method == "ping":
        return {}
    return None


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue  # a notification or a response
        try:
            result = answer(msg)
            if result is None:
                out = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}
            else:
                out = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
        except Exception as e:  # noqa: BLE001
            out = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32602, "message": "bad params: %s" % e}}
        sys.stdout.write(json.dumps(out, separators=(",", ":")) + "\n")
        sys.stdout.flush()
    return 0
