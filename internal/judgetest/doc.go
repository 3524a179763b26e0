// Package judgetest is a fake OpenAI-compatible chat-completions endpoint
// for the tests of package judge, plan and cmd/mcpform: no model can run
// where mcpform is tested, so the judge is a loopback HTTP server that
// answers by the request's model name. It behaves as the judges the tests
// need and real endpoints do not show on demand: one that answers
// equivalent or changed, garbage in every shape, an injected instruction
// with control characters in its reason, a slow one, HTTP errors, one that
// echoes the API key back, an oversized response.
//
// Models (the "model" of the judge block):
//
//	equivalent      {"verdict":"equivalent","confidence":0.9,…}
//	changed         {"verdict":"changed","confidence":0.95,…}
//	unsure          {"verdict":"changed","confidence":0.3,…}
//	typo-aware      changed (0.9) when "after" holds "ignore" or any non-ASCII
//	                rune, equivalent (0.8) otherwise: a plausible judge
//	garbage         content that is not JSON
//	fenced          the verdict inside a ```json code fence
//	extra-field     the verdict with a fourth field
//	maybe           the verdict "maybe"
//	confidence-2    confidence 2
//	injected        equivalent, with a reason that carries an instruction,
//	                an ANSI escape, a bidi override and a newline
//	echo-key        equivalent, with the Authorization header in its reason
//	slow            answers after 10s, or when the request is cancelled
//	http-500        HTTP 500
//	http-401        HTTP 401
//	no-usage        equivalent, without usage
//	huge            a response of 2 MiB
//
// Every answer but no-usage reports usage.total_tokens = TokensPerAnswer.
// A request without "Authorization: Bearer <Key>" is refused with 401 when
// Key is set.
package judgetest
