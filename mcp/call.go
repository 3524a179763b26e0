package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpform/mcpform/internal/jsonscan"
)

// DefaultMaxCallResult bounds the result of each call a probe makes
// (ServerSpec.Calls) when ServerSpec.MaxCallResult is not set.
const DefaultMaxCallResult = 1 << 20

// ToolCall is one tools/call request a probe makes after the lists
// (ServerSpec.Calls): which tool, with which arguments (a JSON object).
type ToolCall struct {
	Name      string
	Arguments json.RawMessage
}

// CallResult is what one ToolCall got: the result exactly as the server
// sent it, or why there is none. A JSON-RPC error, a result that is not
// complete (a 2026-07-28 task or input request), a result larger than the
// bound and no answer in time are each an Err; a tool error (isError) is
// a Result like any other.
type CallResult struct {
	Name   string
	Result json.RawMessage
	Err    error
}

// callTools makes the calls in order, each with the per-request timeout
// (and never past the probe's), and returns one CallResult each. It does
// not fail the probe: a call's failure is its CallResult's.
func (p *prober) callTools(ctx context.Context, s *Surface, calls []ToolCall) []CallResult {
	if len(calls) == 0 {
		return nil
	}
	p.stage = "tools/call"
	if p.remote != nil {
		// The locked tools' x-mcp-header parameters, mirrored into
		// headers as the HTTP transport asks of every tools/call.
		params := map[string][]ParamHeader{}
		for _, c := range calls {
			for _, t := range s.Tools {
				if name, _ := jsonString(jsonscan.Find(t, "name")); name == c.Name {
					if ph, err := ParamHeaders(jsonscan.Find(t, "inputSchema")); err == nil && len(ph) > 0 {
						params[name] = ph
					}
				}
			}
		}
		p.remote.params = params
	}
	limit := p.spec.MaxCallResult
	if limit <= 0 {
		limit = DefaultMaxCallResult
	}
	out := make([]CallResult, 0, len(calls))
	for _, c := range calls {
		r := CallResult{Name: c.Name}
		if ctx.Err() != nil {
			r.Err = fmt.Errorf("not called: the probe's timeout of %v ran out before", p.spec.Timeout)
			out = append(out, r)
			continue
		}
		args := c.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		params, err := json.Marshal(struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}{c.Name, args})
		if err != nil {
			r.Err = fmt.Errorf("the arguments are not JSON: %w", err)
			out = append(out, r)
			continue
		}
		raw, err := p.call(ctx, p.spec.RequestTimeout, "tools/call", params)
		if err == nil {
			err = checkCallResult(raw, limit)
		}
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
				err = &timeoutError{timeout: p.spec.Timeout, err: context.DeadlineExceeded}
			}
			r.Err = err
		} else {
			r.Result = raw
		}
		out = append(out, r)
	}
	return out
}

// checkCallResult refuses what is not a plain, complete tools/call result
// of at most limit bytes. Its words never quote the server.
func checkCallResult(raw json.RawMessage, limit int) error {
	if len(raw) > limit {
		return fmt.Errorf("the result is %d bytes, more than the %d a sample call may return", len(raw), limit)
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(raw, &res); err != nil || res == nil {
		return errors.New("the result is not a JSON object")
	}
	if rt, ok := res["resultType"]; ok {
		var t string
		if json.Unmarshal(rt, &t) != nil || t != "complete" {
			// A task to poll or an input to give: a sample is one plain
			// call, and a probe serves no input.
			return errors.New("the server did not answer with a complete result (resultType is not \"complete\": a task or an input request), which a sample call cannot use")
		}
	}
	if _, ok := res["task"]; ok {
		if _, content := res["content"]; !content {
			return errors.New("the server answered with a task, not a result, which a sample call cannot use")
		}
	}
	return nil
}
