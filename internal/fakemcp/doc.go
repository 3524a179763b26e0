// Package fakemcp is the scriptable MCP server of the tests: it serves a
// surface read from a JSON file over stdio, in either protocol era, and
// misbehaves on request, so tests can show what real servers cannot (a crash
// during the handshake, a pagination loop, 1,001 tools, a rug pull, a server
// that stops reading).
//
// Tests use it by re-executing their own binary, so no helper binary has to
// be built (docs/ARCHITECTURE.md, "How the code is tested"): package mcp's
// TestMain calls Main when MCPFORM_FAKEMCP is set (runtime's when
// MCPFORM_RUNTIME_FAKE is), and cmd/mcpform's TestMain registers it with
// testscript as the command "fakemcp":
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
// One JSON object; every member is optional, and members it does not know
// are ignored:
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
//	  "ttlMs": 1000,                        // the 2026-07-28 era's ttlMs (default 0)
//	  "answerCalls": true,                  // answer tools/call and the other calls (below)
//	  "stderr": "starting\n",               // written to stderr at start
//	  "log": "received.jsonl",              // every line received is appended to this file
//	  "pidFile": "server.pid",              // the server's pid is written here at start
//	  "childPidFile": "child.pid",          // start a long-lived child (/bin/sleep) in the server's
//	                                        // process group and write its pid here
//	  "startDelayMs": 500,                  // sleep this long before reading the first line
//	  "on": {                               // misbehaviour, by method
//	    "initialize": {"do": "exit", "status": 3, "text": "boom"},
//	    "tools/list": {"do": "list-changed", "times": 1},
//	    "tools/call": [                     // a list: the first that applies
//	      {"name": "echo", "do": "wrong-id", "times": 1},
//	      {"name": "slow", "do": "sleep", "ms": 300}
//	    ]
//	  }
//	}
//
// An "on" entry applies to requests (or notifications) with that method. It
// is one misbehaviour or a list of them, of which a message gets the first
// that applies to it: one with "name" only to messages whose params name it
// (a tool or a prompt); with "skip": n not to the first n of the messages it
// matches; with "times": n only to the n after those, else to all. Its "do"
// is one of:
//
//	exit          write "text" (or a default) to stderr and exit with "status" (default 1)
//	garbage       write "text" (default "this is not JSON") to stdout instead of an answer
//	silent        never answer
//	stop-reading  never read stdin again (nor answer)
//	wrong-id      answer normally, but with the id 424242
//	repeat-id     answer normally, twice
//	error         answer with the JSON-RPC error "code" (default -32603) and "message"
//	result        answer with "result" exactly as written
//	repeat-cursor answer a list page whose nextCursor is always "again"
//	list-changed  replace the lists "then" has ({"tools": […], …}, optional), send
//	              notifications/<kind>/list_changed (the kind of a list method,
//	              else tools), then answer normally
//	send          write "send" (below) first, then answer normally
//	huge          write a notification of "size" bytes of data first, then answer normally
//	progress      send notifications/progress for the request's progressToken (if any)
//	              and for the token "bogus" first, then answer normally
//	request       send "send" (requests to the client), wait up to 5 seconds for the
//	              client's answer to the first, and answer the call with that
//	              answer's JSON (or "no answer") as text
//	sleep         answer normally after "ms" milliseconds (others are answered meanwhile)
//	wait-file     answer normally once the file "file" exists (others are answered meanwhile)
//
// "send" is a list of lines written (with any "do" but request) before the
// rest: a JSON string as its text (a line that need not be JSON), anything
// else exactly as written.
//
// Without misbehaviour the server answers server/discover (era modern or
// both; legacy answers -32601 as a legacy server would), initialize (legacy
// or both), ping, and the four list methods of what it declared. With
// "answerCalls" it also answers tools/call with its arguments' JSON as text,
// prompts/get with no messages, resources/read with the text "contents" at
// the URI asked for, completion/complete with the value "a", and
// resources/subscribe, resources/unsubscribe and logging/setLevel; without,
// those get -32601. In the 2026-07-28 era it acknowledges a
// subscriptions/listen and keeps it open (no answer). In the 2026-07-28 era it refuses a request without
// _meta["io.modelcontextprotocol/protocolVersion"] (-32602) or with a
// version it does not list (-32022), and adds resultType and serverInfo in
// _meta to its results, and ttlMs and cacheScope to server/discover's, the
// lists' and resources/read's. The answers to its own requests (see
// request) are the only responses it reads; it ends when stdin does,
// without waiting for answers still due.
package fakemcp
