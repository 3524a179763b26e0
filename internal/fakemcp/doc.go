// Package fakemcp is a scriptable MCP server for tests: it serves a surface
// read from a JSON file over stdio, in either protocol era, and misbehaves on
// request, so tests can show what real servers cannot (a crash during the
// handshake, a pagination loop, 1,001 tools).
//
// Tests use it by re-executing their own binary, so no helper binary has to
// be built (docs/ARCHITECTURE.md, "How the code is tested"): package mcp's
// TestMain calls Main when MCPFORM_FAKEMCP is set, and cmd/mcpform's TestMain
// registers it with testscript as the command "fakemcp":
//
//	testscript.Main(m, map[string]func(){"fakemcp": fakemcp.Main})
//
// and a script starts it as `fakemcp surface.json` (for example as the
// command of a server in mcp.hcl; a relative path is resolved against the
// server's working directory). It needs no environment variable, so it works
// under mcpform's "only the named variables" rule. Main exits the process.
//
// # File format
//
// One JSON object; every member is optional:
//
//	{
//	  "era": "legacy",                      // "legacy" (default), "modern" (2026-07-28 only) or "both"
//	  "protocolVersion": "2025-11-25",      // initialize answer; default: the client's if legacy-valid, else 2025-11-25
//	  "supportedVersions": ["2026-07-28"],  // server/discover answer (default shown)
//	  "serverInfo": {"name": "fakemcp", "version": "1.0.0"},  // default shown
//	  "instructions": "…",                 // absent: none
//	  "capabilities": {"tools": {}},        // default: a capability for each list present below
//	  "tools": [ {…}, … ],                  // items served exactly as written
//	  "prompts": [ … ], "resources": [ … ], "resourceTemplates": [ … ],
//	  "generateTools": 1001,                // add this many tools named tool-0001, tool-0002, …
//	  "pageSize": 2,                        // items per page (cursors "page-N"); 0: one page
//	  "stderr": "starting\n",               // written to stderr at start
//	  "log": "received.jsonl",              // every line received is appended to this file
//	  "startDelayMs": 500,                  // sleep this long before reading the first line
//	  "on": {                               // misbehaviour, by method
//	    "initialize": {"do": "exit", "status": 3, "text": "boom"},
//	    "tools/list": {"do": "list-changed", "times": 1}
//	  }
//	}
//
// An "on" entry applies to requests (or notifications) with that method;
// with "times": n only to the first n of them, else to all. Its "do" is one
// of:
//
//	exit          write "text" (or a default) to stderr and exit with "status" (default 1)
//	garbage       write "text" (default "this is not JSON") to stdout instead of an answer
//	silent        never answer
//	wrong-id      answer normally, but with the id 424242
//	error         answer with the JSON-RPC error "code" (default -32603) and "message"
//	result        answer with "result" exactly as written
//	repeat-cursor answer a list page whose nextCursor is always "again"
//	list-changed  send notifications/<kind>/list_changed first, then answer normally
//
// Without misbehaviour the server answers server/discover (era modern or
// both; legacy answers -32601 as a legacy server would), initialize (legacy
// or both), ping, and the four list methods of what it declared. In the
// 2026-07-28 era it refuses a request without
// _meta["io.modelcontextprotocol/protocolVersion"] (-32602) or with a
// version it does not list (-32022), and adds resultType, ttlMs, cacheScope
// and serverInfo in _meta to its results.
package fakemcp
