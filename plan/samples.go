package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/enforce"
	"github.com/mcpform/mcpform/surface"
)

// SampleCall is one sample a probe makes (mcp.hcl's sample "TOOL" block,
// or the lock's mcpform.samples for verify).
type SampleCall struct {
	Tool             string
	Arguments        json.RawMessage // a JSON object
	AllowSideEffects bool
}

// SampleResult is what became of one SampleCall in a probe.
type SampleResult struct {
	SampleCall
	// Shape is the result's fingerprint (surface.Fingerprint); nil when
	// the sample was not called or has no result.
	Shape *lock.ResultShape
	// Skipped says why the sample was not called: its tool is not marked
	// read-only, live or in the lock. Not an error.
	Skipped string
	// Unknown is set when the server lists no such tool.
	Unknown bool
	// Err says why a sample that was to be called has no shape: its
	// arguments do not fit the tool's input schema (it was not called), the
	// call failed, or the result is not one MCP defines. Never the
	// server's text unescaped.
	Err string
}

// samplesOf are the sample calls of a server declared in mcp.hcl.
func samplesOf(s *lang.Server) []SampleCall {
	var out []SampleCall
	for _, smp := range s.Samples {
		out = append(out, SampleCall{Tool: smp.Tool, Arguments: smp.Arguments, AllowSideEffects: smp.AllowSideEffects})
	}
	return out
}

// lockedSamples are the sample calls a locked entry records, by tool name,
// for verify.
func lockedSamples(e *lock.Entry) []SampleCall {
	if e.Mcpform == nil {
		return nil
	}
	var out []SampleCall
	for tool, smp := range e.Mcpform.Samples {
		out = append(out, SampleCall{Tool: tool, Arguments: smp.Arguments, AllowSideEffects: smp.AllowSideEffects})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}

// sampler decides, once a probe has read the lists, which samples it calls
// (ServerSpec.Calls), and turns the calls' results into SampleResults. A
// sample is called only when its tool's annotations say readOnlyHint =
// true in the live surface and, for a tool the lock holds, in the lock too
// (a server that flips the hint on a destructive tool gets no call before
// the flip is reviewed), unless its block says allow_side_effects = true;
// and only with arguments the tool's input schema accepts, checked as
// mcpform run checks a client's call.
type sampler struct {
	samples []SampleCall
	locked  *lock.Entry // the lock's entry; nil for a new server
	results []SampleResult
	called  []int // index into results of each call made, in order
}

func (sm *sampler) calls(s *mcp.Surface) []mcp.ToolCall {
	sm.results, sm.called = make([]SampleResult, len(sm.samples)), nil
	live, err := surface.Entry(s)
	var out []mcp.ToolCall
	var check *enforce.Checker
	if err == nil {
		check = enforce.New(live)
	}
	for i, c := range sm.samples {
		r := &sm.results[i]
		r.SampleCall = c
		if err != nil {
			r.Err = "the surface cannot be read: " + err.Error()
			continue
		}
		tool, ok := live.Find(lock.Tools, c.Tool)
		if !ok {
			r.Unknown = true
			continue
		}
		if !c.AllowSideEffects {
			if !ReadOnly(tool.JSON) {
				r.Skipped = "the tool's annotations do not say readOnlyHint = true; call it anyway with allow_side_effects = true in the sample block, if the call is safe"
				continue
			}
			if sm.locked != nil {
				if old, ok := sm.locked.Find(lock.Tools, c.Tool); ok && !ReadOnly(old.JSON) {
					r.Skipped = "the locked tool's annotations do not say readOnlyHint = true (the live one's do): it is called once the change of its annotations is applied"
					continue
				}
			}
		}
		params, _ := json.Marshal(struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}{c.Tool, c.Arguments})
		if ref := check.Check(&enforce.Call{Method: "tools/call", Params: params, Kind: lock.Tools, Item: c.Tool, HasItem: true, Arguments: c.Arguments}); ref != nil {
			r.Err = "not called: " + ref.Message
			continue
		}
		sm.called = append(sm.called, i)
		out = append(out, mcp.ToolCall{Name: c.Tool, Arguments: c.Arguments})
	}
	return out
}

// finish reads the calls' results into the SampleResults.
func (sm *sampler) finish(s *mcp.Surface) []SampleResult {
	for j, i := range sm.called {
		r := &sm.results[i]
		if j >= len(s.Calls) {
			r.Err = "the call was not made"
			continue
		}
		c := s.Calls[j]
		if c.Err != nil {
			r.Err = "the call failed: " + escape.String(c.Err.Error())
			continue
		}
		shape, err := surface.Fingerprint(c.Result)
		if err != nil {
			r.Err = "the result cannot be fingerprinted: " + err.Error()
			continue
		}
		r.Shape = shape
	}
	return sm.results
}

// ReadOnly reports whether a tool's definition says annotations.readOnlyHint
// = true, by exact keys (a key that differs in case is not the hint; the
// definition passed strict JSON, so no key is there twice).
func ReadOnly(tool json.RawMessage) bool {
	var t map[string]json.RawMessage
	if json.Unmarshal(tool, &t) != nil {
		return false
	}
	var ann map[string]json.RawMessage
	if json.Unmarshal(t["annotations"], &ann) != nil {
		return false
	}
	return string(bytes.TrimSpace(ann["readOnlyHint"])) == "true"
}

// recordSamples sets the samples of the entry apply writes, and says in the
// plan what became of each: a sample naming no tool, with arguments its
// tool refuses or whose call failed is the server's error; a skipped one is
// a note; allow_side_effects is a warning on every plan.
func recordSamples(p *Plan, sp *ServerPlan, results []SampleResult) {
	if len(results) == 0 || sp.Entry == nil {
		return
	}
	m := map[string]lock.Sample{}
	for _, r := range results {
		m[r.Tool] = lock.Sample{Arguments: r.Arguments, AllowSideEffects: r.AllowSideEffects, Shape: r.Shape}
		name := escape.String(r.Tool)
		switch {
		case r.Unknown:
			sp.Error = joinErr(sp.Error, fmt.Sprintf("sample %q names a tool the server does not list;%s fix the sample block in mcp.hcl", name, suggestTool(r.Tool, sp.Entry)))
		case r.Err != "":
			sp.Error = joinErr(sp.Error, fmt.Sprintf("sample %q: %s; fix its arguments in mcp.hcl, or remove the sample block", name, r.Err))
		case r.Skipped != "":
			p.Notes = append(p.Notes, fmt.Sprintf("server %q: sample %q was not called: %s", sp.Name, name, r.Skipped))
		}
		if r.AllowSideEffects {
			p.Notes = append(p.Notes, fmt.Sprintf("Warning: server %q: sample %q says allow_side_effects = true: plan and verify call the tool every time they run, whatever its annotations say", sp.Name, name))
		}
	}
	sp.Entry.Mcpform.Samples = m
}

// SampleChanges grades the samples of a probe against the locked entry's,
// one Change per finding: a sample added, removed or changed in mcp.hcl
// (CFG-SAMPLE-…: its result is recorded afresh), and for the same call the
// result's shape against the locked one (MCP-RESULT-…): a changed type, a
// removed key, other content block types or order, or a flipped isError is
// major; an added key minor; values are not compared at all. locked nil (a
// new server) has no findings. Pure, like DiffSurface, beside which plan and
// verify call it.
func SampleChanges(serverAddr string, locked *lock.Entry, live []SampleResult) []Change {
	if locked == nil {
		return nil
	}
	var old map[string]lock.Sample
	if locked.Mcpform != nil {
		old = locked.Mcpform.Samples
	}
	byTool := map[string]*SampleResult{}
	var tools []string
	for i := range live {
		byTool[live[i].Tool] = &live[i]
		tools = append(tools, live[i].Tool)
	}
	for t := range old {
		if byTool[t] == nil {
			tools = append(tools, t)
		}
	}
	sort.Strings(tools)
	d := &differ{}
	for _, tool := range tools {
		item := serverAddr + ".tool." + tool
		d.itemAddr = item
		o, inLock := old[tool]
		r := byTool[tool]
		addr := item + ".sample"
		switch {
		case r == nil:
			d.add("CFG-SAMPLE-REMOVED", addr, Delete, sampleJSON(o.Arguments, o.AllowSideEffects), nil, "removed from mcp.hcl: its result is no longer checked")
			continue
		case !inLock:
			d.add("CFG-SAMPLE-ADDED", addr, Create, nil, sampleJSON(r.Arguments, r.AllowSideEffects), "new in mcp.hcl: apply records its result's shape")
			continue
		case !equalJSON(decode(o.Arguments), decode(r.Arguments)) || o.AllowSideEffects != r.AllowSideEffects:
			d.add("CFG-SAMPLE-CHANGED", addr, Update, sampleJSON(o.Arguments, o.AllowSideEffects), sampleJSON(r.Arguments, r.AllowSideEffects),
				"another call: apply records its result's shape, which is not compared with the old call's")
			continue
		}
		res := item + ".result"
		switch {
		case r.Unknown || r.Err != "":
			why := r.Err
			if r.Unknown {
				why = "the server no longer lists the tool"
			}
			d.add("MCP-RESULT-SAMPLE-FAILED", res, Update, nil, nil, "the locked sample call has no result now: "+why)
		case r.Shape == nil && o.Shape != nil:
			d.add("MCP-RESULT-UNCHECKED", res, Update, nil, nil, "the locked sample was not called: "+r.Skipped)
		case r.Shape != nil && o.Shape == nil:
			d.add("MCP-RESULT-SHAPE-ADDED", res, Create, nil, mustJSON(r.Shape), "")
		case r.Shape != nil:
			d.resultShape(res, o.Shape, r.Shape)
		}
	}
	return d.out
}

func sampleJSON(args json.RawMessage, allow bool) json.RawMessage {
	return mustJSON(lock.Sample{Arguments: args, AllowSideEffects: allow})
}

// resultShape compares two fingerprints of results of one call.
func (d *differ) resultShape(addr string, a, b *lock.ResultShape) {
	if a.IsError != b.IsError {
		detail := "the same call now answers with a tool error (isError)"
		if !b.IsError {
			detail = "the same call no longer answers with a tool error (isError)"
		}
		d.add("MCP-RESULT-SHAPE-CHANGED", addr+".isError", Update, mustJSON(a.IsError), mustJSON(b.IsError), detail)
	}
	if !slices.Equal(a.Content, b.Content) {
		d.add("MCP-RESULT-SHAPE-CHANGED", addr+".content", Update, mustJSON(a.Content), mustJSON(b.Content),
			"the content blocks' types, in order: "+strings.Join(a.Content, ", ")+" -> "+strings.Join(b.Content, ", "))
	}
	sc := addr + ".structuredContent"
	switch {
	case a.StructuredContent == nil && b.StructuredContent != nil:
		d.add("MCP-RESULT-KEY-ADDED", sc, Create, nil, mustJSON(b.StructuredContent), "the result has structuredContent now")
	case a.StructuredContent != nil && b.StructuredContent == nil:
		d.add("MCP-RESULT-SHAPE-CHANGED", sc, Delete, mustJSON(a.StructuredContent), nil, "the result no longer has structuredContent")
	case a.StructuredContent != nil:
		d.shape(sc, a.StructuredContent, b.StructuredContent)
	}
}

// shape compares the locked shape a of a value with the live one b. A type
// b has and a does not is a change; a type a has and b lacks is not (a
// value of one of the locked types). Keys of an object are compared, and
// array elements when both sides saw some.
func (d *differ) shape(addr string, a, b *lock.Shape) {
	var added []string
	for _, t := range b.Types {
		if !a.Has(t) {
			added = append(added, t)
		}
	}
	if len(added) > 0 {
		d.add("MCP-RESULT-SHAPE-CHANGED", addr, Update, typesJSON(a.Types), typesJSON(b.Types),
			"the value's type: "+strings.Join(a.Types, " or ")+" -> "+strings.Join(b.Types, " or "))
	}
	if a.Has("object") && b.Has("object") {
		keys := map[string]bool{}
		for k := range a.Properties {
			keys[k] = true
		}
		for k := range b.Properties {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			at := addr + keyAddr(k)
			pa, pb := a.Properties[k], b.Properties[k]
			switch {
			case pa == nil:
				d.add("MCP-RESULT-KEY-ADDED", at, Create, nil, mustJSON(pb), "")
			case pb == nil:
				d.add("MCP-RESULT-SHAPE-CHANGED", at, Delete, mustJSON(pa), nil, "the key is gone from the result")
			default:
				d.shape(at, pa, pb)
			}
		}
	}
	if a.Has("array") && b.Has("array") && a.Items != nil && b.Items != nil {
		d.shape(addr+"[]", a.Items, b.Items)
	}
}

// typesJSON writes a shape's types as the lock does: one as a string,
// several as a list.
func typesJSON(types []string) json.RawMessage {
	if len(types) == 1 {
		return mustJSON(types[0])
	}
	return mustJSON(types)
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// keyAddr is the address segment of an object key: .key, or ["key"] for a
// key that is not a plain name (a dot in it would read as two segments).
func keyAddr(k string) string {
	if plainKey.MatchString(k) {
		return "." + k
	}
	return "[" + strconv.Quote(k) + "]"
}

// sampleRules are the catalogue's rules of sample calls (buildCatalogue).
func sampleRules() []Rule {
	const calls = "A sample block of mcp.hcl (sample \"TOOL\" { arguments = {…} }) names a call plan and verify make, " +
		"only to a tool whose annotations say readOnlyHint = true live and in the lock (or with allow_side_effects = true); " +
		"the lock records the shape of its result: isError, the content blocks' types in order, structuredContent's JSON " +
		"types and keys, never a value. "
	return []Rule{
		{ID: "MCP-RESULT-SHAPE-CHANGED", Grade: Major, Class: Definitional,
			Summary: "The same sample call's result has another shape than the locked one.",
			Detail: calls + "Under the same arguments the result now has a value of another type, lost a key, has other " +
				"content block types or another order of them, or flipped isError. Callers that read the result as it was " +
				"break, and a tool whose results change shape under the same call may be doing something else than what " +
				"was reviewed: the detail says what moved, by its address in the result. Values that differ are never a change.",
			Example: `server.everything.tool.get-sum.result.structuredContent.total: "number" -> "string"`},
		{ID: "MCP-RESULT-KEY-ADDED", Grade: Minor, Class: Definitional,
			Summary: "The same sample call's result has a key the locked shape does not.",
			Detail: calls + "An added key (or structuredContent where there was none) keeps what callers read working, " +
				"like an added optional property: graded minor.",
			Example: `server.everything.tool.get-sum.result.structuredContent.currency: (none) -> "string"`},
		{ID: "MCP-RESULT-SHAPE-ADDED", Grade: None, Class: Definitional,
			Summary: "A locked sample's result shape is recorded for the first time.",
			Detail: calls + "The sample was locked without a shape (its tool was not marked read-only then) and is called " +
				"now: apply records the shape, which later plans and verify compare with.",
			Example: `server.everything.tool.get-sum.result: (none) -> {"content":["text"]}`},
		{ID: "MCP-RESULT-UNCHECKED", Grade: None, Class: Definitional, Security: true,
			Summary: "A locked sample was not called, so its result is not checked.",
			Detail: calls + "The tool's annotations no longer say readOnlyHint = true (live or in the lock), so the call " +
				"is not made and its shape not compared: a server that wants its results unchecked can flip the hint. " +
				"Read the tool's annotation change with that in mind; apply drops the shape.",
			Example: `server.everything.tool.get-sum.result: not called (readOnlyHint true -> false)`},
		{ID: "MCP-RESULT-SAMPLE-FAILED", Grade: Major, Class: Definitional,
			Summary: "A locked sample call no longer gives a result.",
			Detail: calls + "The call was refused by the tool's input schema, answered with a JSON-RPC error, a task or an " +
				"input request, timed out, returned more than a sample may or something that is not a tools/call result, " +
				"or the server no longer lists the tool. Callers of the reviewed call would fail the same way. In a plan the " +
				"server's error says how; fix the sample's arguments or remove the sample block.",
			Example: `server.everything.tool.get-sum.result: the call failed: error -32603: internal error`},
		{ID: "CFG-SAMPLE-ADDED", Grade: None, Class: Config,
			Summary: "A sample block was added to mcp.hcl.",
			Detail:  calls + "apply records the shape of the new sample's result.",
			Example: `sample "get-sum" { arguments = { a = 2, b = 3 } }`},
		{ID: "CFG-SAMPLE-REMOVED", Grade: None, Class: Config,
			Summary: "A sample block was removed from mcp.hcl.",
			Detail:  calls + "apply drops the sample and its shape: the tool's results are no longer checked.",
			Example: `sample "get-sum": removed`},
		{ID: "CFG-SAMPLE-CHANGED", Grade: None, Class: Config,
			Summary: "A sample block's arguments or allow_side_effects changed.",
			Detail: calls + "Another call may have another result, so its shape is recorded afresh, not compared with the " +
				"old call's. allow_side_effects = true makes plan and verify call a tool that may change things on every run.",
			Example: `sample "get-sum": {"a":2,"b":3} -> {"a":2,"b":4}`},
	}
}
