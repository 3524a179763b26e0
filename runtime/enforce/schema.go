package enforce

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/jsonscan"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaCache compiles each tool's locked input schema (or, when output is
// set, its output schema) on the tool's first call and keeps it for the run.
type schemaCache struct {
	output bool
	mu     sync.Mutex
	tools  map[string]*toolSchema
}

type toolSchema struct {
	once   sync.Once
	tool   json.RawMessage // the definition, until compiled
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
	// absent: an output schema cache's tool declares no outputSchema
	// (or null).
	absent bool
}

// noLoader refuses every $ref outside the schema: a locked schema must not
// make the proxy read files or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema references %q outside itself, which mcpform does not load", escape.String(url))
}

// lookup returns the tool's entry if get made it, compiled, else nil.
func (c *schemaCache) lookup(name string) *toolSchema {
	c.mu.Lock()
	t := c.tools[name]
	c.mu.Unlock()
	if t != nil {
		c.ready(t)
	}
	return t
}

// present returns t, or nil when the tool has no output schema.
func (t *toolSchema) present() *toolSchema {
	if t.absent {
		return nil
	}
	return t
}

func (c *schemaCache) get(name string, tool json.RawMessage) *toolSchema {
	c.mu.Lock()
	if c.tools == nil {
		c.tools = map[string]*toolSchema{}
	}
	t := c.tools[name]
	if t == nil {
		t = &toolSchema{tool: tool}
		c.tools[name] = t
	}
	c.mu.Unlock()
	c.ready(t)
	return t
}

// ready compiles t's schema from its tool's definition, once.
func (c *schemaCache) ready(t *toolSchema) {
	t.once.Do(func() {
		if c.output {
			t.compileOutput(t.tool)
		} else {
			t.compile(t.tool)
		}
		t.tool = nil
	})
}

// compileSchema compiles the schema raw (the tool's member, named what for
// the messages) as the input and output schemas both are: JSON Schema
// 2020-12 unless its $schema names another draft (the MCP specification's
// default), no $ref outside itself.
func compileSchema(raw []byte, member, what string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("the locked %s is not JSON: %w", what, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	url := "mcpform:///" + member + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("the locked %s cannot be used: %w", what, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("the locked %s cannot be compiled: %w", what, err)
	}
	return s, nil
}

// compileOutput compiles the tool's locked output schema: plain JSON
// Schema, no closed-schema rule (that one is about what reaches the
// server).
func (t *toolSchema) compileOutput(tool json.RawMessage) {
	raw := jsonscan.Find(tool, "outputSchema")
	if raw == nil || string(raw) == "null" {
		t.absent = true
		return
	}
	t.schema, t.err = compileSchema(raw, "outputSchema", "output schema")
}

func (t *toolSchema) compile(tool json.RawMessage) {
	t.names = schemaProps(tool)
	raw := jsonscan.Find(tool, "inputSchema")
	s, err := compileSchema(raw, "inputSchema", "input schema")
	if err != nil {
		t.err = err
		return
	}
	t.schema = s
	open := false
	for _, k := range []string{"additionalProperties", "patternProperties", "unevaluatedProperties", "allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "dependentSchemas"} {
		if jsonscan.Find(raw, k) != nil {
			open = true
		}
	}
	if !open {
		t.closed = true
		t.props = map[string]bool{}
		var ms [16]jsonscan.Member
		for _, m := range jsonscan.Members(ms[:0], jsonscan.Find(raw, "properties")) {
			name, _ := jsonscan.String(m.Key)
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
		var ms [16]jsonscan.Member
		for _, m := range jsonscan.Members(ms[:0], args) {
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

// validateValue checks a JSON value (a result's structuredContent) against
// the schema; the error names the first violation only, clipped, since it
// quotes the server's data.
func (t *toolSchema) validateValue(v []byte) error {
	if t.err != nil {
		return t.err
	}
	if err := t.schema.Validate(instance(v)); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			parts := violations(ve)
			msg := clip(parts[0], maxViolation)
			if len(parts) > 1 {
				msg += fmt.Sprintf(" (and %d more)", len(parts)-1)
			}
			return errors.New(escape.String(msg))
		}
		return err
	}
	return nil
}

// maxViolation bounds the violation a withheld result's tool error quotes:
// a pattern's violation quotes the whole string it refused.
const maxViolation = 300

// clip cuts s to at most n bytes, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xc0 == 0x80 {
		i--
	}
	return s[:i] + "… (clipped)"
}

// violations are the causes of a validation error (one per line after the
// first, which names the schema URL), or that first line when it has none.
func violations(ve *jsonschema.ValidationError) []string {
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
	return parts
}

// validationMessage keeps the causes of a validation error, at most five.
func validationMessage(ve *jsonschema.ValidationError) string {
	parts := violations(ve)
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
	i := jsonscan.SkipWS(raw, 0)
	if i >= len(raw) {
		return nil
	}
	raw = raw[i:jsonscan.SkipValue(raw, i)]
	switch raw[0] {
	case '{':
		var ms [16]jsonscan.Member
		list := jsonscan.Members(ms[:0], raw)
		obj := make(map[string]any, len(list))
		for _, m := range list {
			k, _ := jsonscan.String(m.Key)
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
		s, _ := jsonscan.String(raw)
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
