package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/jsonscan"
	"github.com/mcpform/mcpform/internal/mutation"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
)

// localMethods are answered by the terminal handler from the lock.
var localMethods = map[string]bool{
	"initialize": true, "server/discover": true, "ping": true,
	"tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true,
}

// enforce is the policy middleware: only locked items go further, tools/call
// arguments must satisfy the locked input schema, unknown methods are
// refused.
func (p *proxy) enforce(next Handler) Handler {
	return func(ctx context.Context, req *Request, reply Reply) {
		if r := p.refusal(req); r != nil {
			reply(r, nil)
			return
		}
		next(ctx, req, reply)
	}
}

// refusal is enforce's verdict on req: nil lets it through.
func (p *proxy) refusal(req *Request) *Response {
	if localMethods[req.Method] {
		return nil
	}
	if r := checkParamCase(req); r != nil && !mutation.Off("casekeys") {
		return r
	}
	switch req.Method {
	case "tools/call":
		return p.checkToolCall(req)
	case "prompts/get":
		return p.checkPrompt(req)
	case "resources/read", "resources/unsubscribe":
		return p.checkResource(req)
	case "resources/subscribe":
		if !p.capability("resources", "subscribe") {
			return rpcError(mcp.CodeMethodNotFound, "the locked server does not support resources/subscribe")
		}
		return p.checkResource(req)
	case "completion/complete":
		return p.checkCompletion(req)
	case "logging/setLevel":
		if !p.capability("logging", "") {
			return rpcError(mcp.CodeMethodNotFound, "the locked server does not support logging")
		}
		return nil
	}
	return rpcError(mcp.CodeMethodNotFound, "method not found: mcpform does not forward "+escape.String(req.Method))
}

// capability reports whether the locked capabilities hold name (and, when
// sub is set, name.sub == true).
func (p *proxy) capability(name, sub string) bool {
	c := find(p.entry.Capabilities, name)
	if c == nil || string(c) == "null" {
		return false
	}
	return sub == "" || string(find(c, sub)) == "true"
}

func (p *proxy) checkToolCall(req *Request) *Response {
	if !req.HasItem {
		return rpcError(mcp.CodeInvalidParams, `tools/call needs params.name, a string`)
	}
	item, ok := p.entry.Find(lock.Tools, req.Item)
	if !ok {
		return rpcError(mcp.CodeInvalidParams, fmt.Sprintf("unknown tool %q", escape.String(req.Item)))
	}
	args := req.Arguments
	if args != nil && (len(args) == 0 || args[0] != '{') {
		return toolError("mcpform refused the call: arguments must be an object")
	}
	schema := p.schemas.get(req.Item, item.JSON)
	if why, bad := argumentCase(args, schema.names); bad && !mutation.Off("casekeys") {
		return toolError(fmt.Sprintf("mcpform refused the call to %q: %s", escape.String(req.Item), why))
	}
	if mutation.Off("argcheck") {
		return nil
	}
	if err := schema.validate(args); err != nil {
		return toolError(fmt.Sprintf("mcpform refused the call to %q: the arguments do not match the locked input schema: %v", escape.String(req.Item), err))
	}
	return nil
}

// toolError is a tools/call result the model sees: the MCP way to report a
// refused call as a tool error rather than a protocol error.
func toolError(text string) *Response {
	b := []byte(`{"content":[{"type":"text","text":`)
	b = mcp.AppendQuoted(b, text)
	b = append(b, `}],"isError":true}`...)
	return &Response{Result: b, Refused: true}
}

func (p *proxy) checkPrompt(req *Request) *Response {
	if !req.HasItem {
		return rpcError(mcp.CodeInvalidParams, `prompts/get needs params.name, a string`)
	}
	item, ok := p.entry.Find(lock.Prompts, req.Item)
	if !ok {
		return rpcError(mcp.CodeInvalidParams, fmt.Sprintf("unknown prompt %q", escape.String(req.Item)))
	}
	var decl []struct {
		Name     string `json:"name"`
		Required bool   `json:"required"`
	}
	if raw := find(item.JSON, "arguments"); raw != nil {
		_ = json.Unmarshal(raw, &decl)
	}
	var args map[string]json.RawMessage
	if req.Arguments != nil {
		if err := json.Unmarshal(req.Arguments, &args); err != nil || args == nil {
			return rpcError(mcp.CodeInvalidParams, "prompt arguments must be an object")
		}
	}
	known := map[string]bool{}
	for _, d := range decl {
		known[d.Name] = true
		if _, ok := args[d.Name]; d.Required && !ok {
			return rpcError(mcp.CodeInvalidParams, fmt.Sprintf("prompt %q: missing required argument %q", escape.String(req.Item), escape.String(d.Name)))
		}
	}
	for name, v := range args {
		if !known[name] {
			return rpcError(mcp.CodeInvalidParams, fmt.Sprintf("prompt %q: unknown argument %q", escape.String(req.Item), escape.String(name)))
		}
		if len(v) == 0 || v[0] != '"' {
			return rpcError(mcp.CodeInvalidParams, fmt.Sprintf("prompt %q: argument %q must be a string", escape.String(req.Item), escape.String(name)))
		}
	}
	return nil
}

func (p *proxy) checkResource(req *Request) *Response {
	if !req.HasItem {
		return rpcError(mcp.CodeInvalidParams, req.Method+` needs params.uri, a string`)
	}
	if !p.resourceAllowed(req.Item) {
		return rpcError(mcp.CodeInvalidParams, fmt.Sprintf("unknown resource %q: not locked and matching no locked resource template", escape.String(req.Item)))
	}
	return nil
}

// resourceAllowed reports whether uri is a locked resource or matches a
// locked resource template.
func (p *proxy) resourceAllowed(uri string) bool {
	if _, ok := p.entry.Find(lock.Resources, uri); ok {
		return true
	}
	for _, t := range p.entry.ResourceTemplates {
		if matchTemplate(t.Key, uri) {
			return true
		}
	}
	return false
}

func (p *proxy) checkCompletion(req *Request) *Response {
	if !p.capability("completions", "") {
		return rpcError(mcp.CodeMethodNotFound, "the locked server does not support completion/complete")
	}
	ref := find(req.Params, "ref")
	typ, _ := stringValue(find(ref, "type"))
	switch typ {
	case "ref/prompt":
		name, ok := stringValue(find(ref, "name"))
		if _, locked := p.entry.Find(lock.Prompts, name); !ok || !locked {
			return rpcError(mcp.CodeInvalidParams, fmt.Sprintf("unknown prompt %q", escape.String(name)))
		}
	case "ref/resource":
		uri, ok := stringValue(find(ref, "uri"))
		_, tmpl := p.entry.Find(lock.ResourceTemplates, uri)
		_, res := p.entry.Find(lock.Resources, uri)
		if !ok || !tmpl && !res {
			return rpcError(mcp.CodeInvalidParams, fmt.Sprintf("unknown resource template %q", escape.String(uri)))
		}
	default:
		return rpcError(mcp.CodeInvalidParams, "completion/complete needs params.ref of type ref/prompt or ref/resource")
	}
	return nil
}

// matchTemplate matches uri against an RFC 6570 template of level 1
// ({var}: unreserved characters and percent-escapes only, so no "/") plus
// the reserved expansion {+var} of level 2, which servers use for paths
// and which may hold "/" but no dot-segment ("." or ".." between slashes):
// a template for one directory must not reach another.
func matchTemplate(tmpl, uri string) bool {
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			return tmpl == uri
		}
		if !strings.HasPrefix(uri, tmpl[:i]) {
			return false
		}
		uri = uri[i:]
		tmpl = tmpl[i+1:]
		j := strings.IndexByte(tmpl, '}')
		if j < 0 {
			return false
		}
		expr := tmpl[:j]
		tmpl = tmpl[j+1:]
		reserved := strings.HasPrefix(expr, "+")
		if strings.ContainsAny(expr, ",*:#./;?&=") || (reserved && strings.Contains(expr[1:], "+")) {
			return false // beyond what the proxy understands: refuse
		}
		// The value runs to the next literal part of the template (or the
		// end); values are matched shortest first against each possible
		// end, so "{a}-{b}" works.
		next := tmpl
		if k := strings.IndexByte(next, '{'); k >= 0 {
			next = next[:k]
		}
		for end := 0; end <= len(uri); end++ {
			v := uri[:end]
			if end > 0 && !validValue(v[end-1:], reserved) {
				return false
			}
			if strings.HasPrefix(uri[end:], next) && (next != "" || strings.IndexByte(tmpl, '{') >= 0 || end == len(uri)) {
				if end > 0 && !dotFree(v) {
					continue
				}
				if matchTemplate(tmpl, uri[end:]) {
					return true
				}
			}
		}
		return false
	}
}

func validValue(s string, reserved bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("-._~%", c) >= 0:
		case reserved && strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func dotFree(v string) bool {
	for _, seg := range strings.Split(v, "/") {
		if seg == "." || seg == ".." || strings.EqualFold(seg, "%2e%2e") || strings.EqualFold(seg, ".%2e") || strings.EqualFold(seg, "%2e.") || strings.EqualFold(seg, "%2e") {
			return false
		}
	}
	return true
}

// schemaCache compiles each tool's locked input schema on its first call and
// keeps it for the run.
type schemaCache struct {
	mu    sync.Mutex
	tools map[string]*toolSchema
}

type toolSchema struct {
	once   sync.Once
	schema *jsonschema.Schema
	err    error
	// closed: the schema names its properties and says nothing about
	// others, so an argument it does not name is refused (run forwards a
	// call only with arguments the locked schema names: unknown or missing
	// arguments are refused; docs/GUARANTEES.md, section 2) although JSON
	// Schema alone would let it through.
	closed bool
	props  map[string]bool
	// names are the properties the schema names at its top level, for
	// argumentCase.
	names [][]byte
}

// noLoader refuses every $ref outside the schema: a locked schema must not
// make the proxy read files or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema references %q outside itself, which mcpform does not load", escape.String(url))
}

func (c *schemaCache) get(name string, tool json.RawMessage) *toolSchema {
	c.mu.Lock()
	if c.tools == nil {
		c.tools = map[string]*toolSchema{}
	}
	t := c.tools[name]
	if t == nil {
		t = &toolSchema{}
		c.tools[name] = t
	}
	c.mu.Unlock()
	t.once.Do(func() { t.compile(tool) })
	return t
}

func (t *toolSchema) compile(tool json.RawMessage) {
	t.names = schemaProps(tool)
	raw := find(tool, "inputSchema")
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.err = fmt.Errorf("the locked input schema is not JSON: %w", err)
		return
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "mcpform:///inputSchema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.err = fmt.Errorf("the locked input schema cannot be used: %w", err)
		return
	}
	s, err := c.Compile(url)
	if err != nil {
		t.err = fmt.Errorf("the locked input schema cannot be compiled: %w", err)
		return
	}
	t.schema = s
	open := false
	for _, k := range []string{"additionalProperties", "patternProperties", "unevaluatedProperties", "allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "dependentSchemas"} {
		if find(raw, k) != nil {
			open = true
		}
	}
	if !open {
		t.closed = true
		t.props = map[string]bool{}
		var ms [16]member
		for _, m := range members(ms[:0], find(raw, "properties")) {
			name, _ := stringValue(m.Key)
			t.props[name] = true
		}
	}
}

// validate checks a call's arguments against the schema.
func (t *toolSchema) validate(args json.RawMessage) error {
	if t.err != nil {
		return t.err
	}
	if args == nil {
		args = json.RawMessage("{}")
	}
	if t.closed {
		var ms [16]member
		for _, m := range members(ms[:0], args) {
			if n := keyBytes(m.Key); !t.props[string(n)] {
				return fmt.Errorf("unknown argument %q", escape.String(string(n)))
			}
		}
	}
	if err := t.schema.Validate(instance(args)); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(validationMessage(ve))
		}
		return err
	}
	return nil
}

// validationMessage keeps the causes of a validation error (one per line
// after the first, which names the schema URL), at most five.
func validationMessage(ve *jsonschema.ValidationError) string {
	lines := strings.Split(ve.Error(), "\n")
	var parts []string
	for _, l := range lines[1:] {
		if l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- ")); l != "" {
			parts = append(parts, l)
		}
	}
	if len(parts) == 0 {
		parts = lines[:1]
	}
	if len(parts) > 5 {
		parts = append(parts[:5], fmt.Sprintf("and %d more", len(parts)-5))
	}
	return escape.String(strings.Join(parts, "; "))
}

// instance decodes arguments into the values the schema validator takes,
// the ones jsonschema.UnmarshalJSON returns (maps, slices, json.Number,
// strings, booleans, nil), without encoding/json, which cost a third of a
// call's schema check: the arguments passed the strict JSON check on the
// way in (FuzzInstance holds the two decoders equal).
func instance(raw []byte) any {
	i := skipWS(raw, 0)
	if i >= len(raw) {
		return nil
	}
	raw = raw[i:skipValue(raw, i)]
	switch raw[0] {
	case '{':
		var ms [16]member
		list := members(ms[:0], raw)
		obj := make(map[string]any, len(list))
		for _, m := range list {
			k, _ := stringValue(m.Key)
			obj[k] = instance(m.Value)
		}
		return obj
	case '[':
		var es [16][]byte
		list := jsonscan.Elements(es[:0], raw)
		arr := make([]any, len(list))
		for j, e := range list {
			arr[j] = instance(e)
		}
		return arr
	case '"':
		s, _ := stringValue(raw)
		return s
	case 't':
		return true
	case 'f':
		return false
	case 'n':
		return nil
	}
	return json.Number(raw)
}
