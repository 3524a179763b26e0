package enforce

import (
	"encoding/json"
	"fmt"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/jsonscan"
	"github.com/mcpform/mcpform/internal/mutation"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
)

// Call is what the checks read of one client request. runtime fills it
// once from the strictly decoded message (runtime.Request embeds it).
type Call struct {
	Method string
	// Params are the params as received (strict JSON: no duplicate keys),
	// nil when absent.
	Params json.RawMessage

	// Kind and Item name the locked item the request is about, for
	// tools/call and prompts/get (the name), resources/read and
	// resources/(un)subscribe (the URI); HasItem is false otherwise.
	Kind    lock.Kind
	Item    string
	HasItem bool
	// Arguments are the tools/call or prompts/get arguments as received
	// (nil when absent).
	Arguments json.RawMessage
}

// Refusal is why a call does not go to the server: a JSON-RPC error, or,
// when Tool is set, a tool error result the model sees (the MCP way to
// report a refused tools/call).
type Refusal struct {
	Code    int64
	Message string
	Tool    bool
}

func refuse(code int64, msg string) *Refusal { return &Refusal{Code: code, Message: msg} }

func toolRefusal(msg string) *Refusal { return &Refusal{Message: msg, Tool: true} }

// Checker holds one lock entry and the input and output schemas compiled
// from it, each on its tool's first call. It is safe for concurrent use.
type Checker struct {
	entry   *lock.Entry
	schemas schemaCache
	outputs schemaCache
}

// New returns the checker for e, a verified lock entry.
func New(e *lock.Entry) *Checker { return &Checker{entry: e, outputs: schemaCache{output: true}} }

// Check returns why c may not go to the server, or nil: only locked items,
// tools/call arguments that satisfy the locked input schema (no unknown,
// missing or wrong-case arguments), no method mcpform does not forward.
// Methods the proxy answers from the lock itself are not Check's to see.
func (k *Checker) Check(c *Call) *Refusal {
	if r := checkParamCase(c); r != nil && !mutation.Off("casekeys") {
		return r
	}
	switch c.Method {
	case "tools/call":
		return k.checkToolCall(c)
	case "prompts/get":
		return k.checkPrompt(c)
	case "resources/read", "resources/unsubscribe":
		return k.checkResource(c)
	case "resources/subscribe":
		if !k.Capability("resources", "subscribe") {
			return refuse(mcp.CodeMethodNotFound, "the locked server does not support resources/subscribe")
		}
		return k.checkResource(c)
	case "completion/complete":
		return k.checkCompletion(c)
	case "logging/setLevel":
		if !k.Capability("logging", "") {
			return refuse(mcp.CodeMethodNotFound, "the locked server does not support logging")
		}
		return nil
	case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
		return k.checkTask(c)
	case "subscriptions/listen":
		return k.checkListen(c)
	}
	return refuse(mcp.CodeMethodNotFound, "method not found: mcpform does not forward "+escape.String(c.Method))
}

// checkTask lets the task methods through when the lock's capabilities
// declare them (tasks/list and tasks/cancel each on its own); which task
// ids this client may name is the tasks link's to decide, from what the
// server told this session.
func (k *Checker) checkTask(c *Call) *Refusal {
	need := []string{"tasks"}
	switch c.Method {
	case "tasks/list":
		need = append(need, "list")
	case "tasks/cancel":
		need = append(need, "cancel")
	}
	if !k.declares(need...) {
		return refuse(mcp.CodeMethodNotFound, "the locked server does not support "+c.Method)
	}
	if c.Method != "tasks/list" {
		if _, ok := jsonscan.String(jsonscan.Find(c.Params, "taskId")); !ok {
			return refuse(mcp.CodeInvalidParams, c.Method+" needs params.taskId, a string")
		}
	}
	return nil
}

// checkListen checks a 2026-07-28 subscriptions/listen filter: an object
// whose list flags are booleans, and whose resourceSubscriptions name only
// locked resources (or URIs of locked templates) of a server that supports
// subscriptions.
func (k *Checker) checkListen(c *Call) *Refusal {
	filter := jsonscan.Find(c.Params, "notifications")
	if len(filter) == 0 || filter[0] != '{' {
		return refuse(mcp.CodeInvalidParams, "subscriptions/listen needs params.notifications, an object")
	}
	for _, flag := range []string{"toolsListChanged", "promptsListChanged", "resourcesListChanged"} {
		if v := jsonscan.Find(filter, flag); v != nil && string(v) != "true" && string(v) != "false" {
			return refuse(mcp.CodeInvalidParams, "notifications."+flag+" must be a boolean")
		}
	}
	subs := jsonscan.Find(filter, "resourceSubscriptions")
	if subs == nil {
		return nil
	}
	if subs[0] != '[' {
		return refuse(mcp.CodeInvalidParams, "notifications.resourceSubscriptions must be an array of URIs")
	}
	var es [16][]byte
	list := jsonscan.Elements(es[:0], subs)
	if len(list) > 0 && !k.Capability("resources", "subscribe") {
		return refuse(mcp.CodeInvalidParams, "the locked server does not support resource subscriptions")
	}
	for _, e := range list {
		uri, ok := jsonscan.String(e)
		if !ok {
			return refuse(mcp.CodeInvalidParams, "notifications.resourceSubscriptions must be an array of URIs")
		}
		if !k.ResourceAllowed(uri) {
			return refuse(mcp.CodeInvalidParams, fmt.Sprintf("unknown resource %q: not locked and matching no locked resource template", escape.String(uri)))
		}
	}
	return nil
}

// declares reports whether the locked capabilities hold the object at path
// (capabilities.tasks.list, for example): present and not null.
func (k *Checker) declares(path ...string) bool {
	v := k.entry.Capabilities
	for _, name := range path {
		if v = jsonscan.Find(v, name); v == nil || string(v) == "null" {
			return false
		}
	}
	return true
}

// Capability reports whether the locked capabilities hold name (and, when
// sub is set, name.sub == true).
func (k *Checker) Capability(name, sub string) bool {
	c := jsonscan.Find(k.entry.Capabilities, name)
	if c == nil || string(c) == "null" {
		return false
	}
	return sub == "" || string(jsonscan.Find(c, sub)) == "true"
}

func (k *Checker) checkToolCall(c *Call) *Refusal {
	if !c.HasItem {
		return refuse(mcp.CodeInvalidParams, `tools/call needs params.name, a string`)
	}
	item, ok := k.entry.Find(lock.Tools, c.Item)
	if !ok {
		return refuse(mcp.CodeInvalidParams, fmt.Sprintf("unknown tool %q", escape.String(c.Item)))
	}
	if jsonscan.Find(c.Params, "task") != nil && !k.declares("tasks", "requests", "tools", "call") {
		return refuse(mcp.CodeInvalidParams, "the locked server does not run tools/call as a task (capabilities.tasks.requests.tools.call)")
	}
	args := c.Arguments
	if args != nil && (len(args) == 0 || args[0] != '{') {
		return toolRefusal("mcpform refused the call: arguments must be an object")
	}
	schema := k.schemas.get(c.Item, item.JSON)
	if why, bad := argumentCase(args, schema.names); bad && !mutation.Off("casekeys") {
		return toolRefusal(fmt.Sprintf("mcpform refused the call to %q: %s", escape.String(c.Item), why))
	}
	if mutation.Off("argcheck") {
		return nil
	}
	if err := schema.validate(args); err != nil {
		return toolRefusal(fmt.Sprintf("mcpform refused the call to %q: the arguments do not match the locked input schema: %v", escape.String(c.Item), err))
	}
	return nil
}

// HasOutputSchema reports whether the locked tool declares an outputSchema
// (present and not null): only its results are CheckResult's to see.
func (k *Checker) HasOutputSchema(tool string) bool { return k.outputSchema(tool) != nil }

// outputSchema returns the locked tool's output schema, compiled on first
// use, or nil when the tool is not locked or declares none.
func (k *Checker) outputSchema(tool string) *toolSchema {
	if t := k.outputs.lookup(tool); t != nil {
		return t.present()
	}
	item, ok := k.entry.Find(lock.Tools, tool)
	if !ok {
		return nil // not kept: only locked names are
	}
	return k.outputs.get(tool, item.JSON).present()
}

// resultKeys are the members of a tools/call result CheckResult reads.
var resultKeys = keyList("structuredContent", "isError", "resultType")

// CheckResult returns why result, the server's tools/call result for the
// locked tool, may not reach the client, or nil. A tool whose locked
// definition has an outputSchema must return structuredContent (the MCP
// specification requires it) that satisfies the schema (compiled once per
// tool, as the input schemas are); a tool error (isError true) need not,
// and passes as it is, and so does a 2026-07-28 input_required result,
// which is no result yet. Keys of the result, or of its structuredContent
// at any depth, that differ only in case from each other or from those it
// reads are refused: a client that reads keys regardless of case could take
// the error flag or the structured content from the twin mcpform did not
// check. A tool without an outputSchema is not checked. The refusal is a
// tool error naming the tool and the first violation, escaped (it quotes
// the server's data).
func (k *Checker) CheckResult(tool string, result json.RawMessage) *Refusal {
	if mutation.Off("outputcheck") {
		return nil
	}
	schema := k.outputSchema(tool)
	if schema == nil {
		return nil
	}
	withheld := func(why string) *Refusal {
		return toolRefusal(fmt.Sprintf("mcpform withheld the result of %q: %s", escape.String(tool), why))
	}
	// One pass over the result's members: it may be large, and only its
	// top level is read here.
	var ms [16]jsonscan.Member
	list := jsonscan.Members(ms[:0], result)
	if key, twin, bad := memberCaseTwin(list, resultKeys); bad {
		return withheld(fmt.Sprintf("the result holds %q and %q, keys that differ only in case", escape.String(key), escape.String(twin)))
	}
	var sc, isError, resultType []byte
	for _, m := range list {
		switch string(keyBytes(m.Key)) {
		case "structuredContent":
			sc = m.Value
		case "isError":
			isError = m.Value
		case "resultType":
			resultType = m.Value
		}
	}
	if string(isError) == "true" || string(resultType) == `"input_required"` {
		return nil
	}
	if sc == nil {
		return withheld("the locked tool declares an output schema, and the result has no structuredContent")
	}
	if key, twin, bad := nestedCaseTwin(sc); bad {
		return withheld(fmt.Sprintf("its structuredContent holds %q and %q, keys that differ only in case", escape.String(key), escape.String(twin)))
	}
	if err := schema.validateValue(sc); err != nil {
		return withheld("its structuredContent does not match the locked output schema: " + err.Error())
	}
	return nil
}

func (k *Checker) checkPrompt(c *Call) *Refusal {
	if !c.HasItem {
		return refuse(mcp.CodeInvalidParams, `prompts/get needs params.name, a string`)
	}
	item, ok := k.entry.Find(lock.Prompts, c.Item)
	if !ok {
		return refuse(mcp.CodeInvalidParams, fmt.Sprintf("unknown prompt %q", escape.String(c.Item)))
	}
	var decl []struct {
		Name     string `json:"name"`
		Required bool   `json:"required"`
	}
	if raw := jsonscan.Find(item.JSON, "arguments"); raw != nil {
		_ = json.Unmarshal(raw, &decl)
	}
	var args map[string]json.RawMessage
	if c.Arguments != nil {
		if err := json.Unmarshal(c.Arguments, &args); err != nil || args == nil {
			return refuse(mcp.CodeInvalidParams, "prompt arguments must be an object")
		}
	}
	known := map[string]bool{}
	for _, d := range decl {
		known[d.Name] = true
		if _, ok := args[d.Name]; d.Required && !ok {
			return refuse(mcp.CodeInvalidParams, fmt.Sprintf("prompt %q: missing required argument %q", escape.String(c.Item), escape.String(d.Name)))
		}
	}
	for name, v := range args {
		if !known[name] {
			return refuse(mcp.CodeInvalidParams, fmt.Sprintf("prompt %q: unknown argument %q", escape.String(c.Item), escape.String(name)))
		}
		if len(v) == 0 || v[0] != '"' {
			return refuse(mcp.CodeInvalidParams, fmt.Sprintf("prompt %q: argument %q must be a string", escape.String(c.Item), escape.String(name)))
		}
	}
	return nil
}

func (k *Checker) checkResource(c *Call) *Refusal {
	if !c.HasItem {
		return refuse(mcp.CodeInvalidParams, c.Method+` needs params.uri, a string`)
	}
	if !k.ResourceAllowed(c.Item) {
		return refuse(mcp.CodeInvalidParams, fmt.Sprintf("unknown resource %q: not locked and matching no locked resource template", escape.String(c.Item)))
	}
	return nil
}

// ResourceAllowed reports whether uri is a locked resource or matches a
// locked resource template.
func (k *Checker) ResourceAllowed(uri string) bool {
	if _, ok := k.entry.Find(lock.Resources, uri); ok {
		return true
	}
	for _, t := range k.entry.ResourceTemplates {
		if matchTemplate(t.Key, uri) {
			return true
		}
	}
	return false
}

func (k *Checker) checkCompletion(c *Call) *Refusal {
	if !k.Capability("completions", "") {
		return refuse(mcp.CodeMethodNotFound, "the locked server does not support completion/complete")
	}
	ref := jsonscan.Find(c.Params, "ref")
	typ, _ := jsonscan.String(jsonscan.Find(ref, "type"))
	switch typ {
	case "ref/prompt":
		name, ok := jsonscan.String(jsonscan.Find(ref, "name"))
		if _, locked := k.entry.Find(lock.Prompts, name); !ok || !locked {
			return refuse(mcp.CodeInvalidParams, fmt.Sprintf("unknown prompt %q", escape.String(name)))
		}
	case "ref/resource":
		uri, ok := jsonscan.String(jsonscan.Find(ref, "uri"))
		_, tmpl := k.entry.Find(lock.ResourceTemplates, uri)
		_, res := k.entry.Find(lock.Resources, uri)
		if !ok || !tmpl && !res {
			return refuse(mcp.CodeInvalidParams, fmt.Sprintf("unknown resource template %q", escape.String(uri)))
		}
	default:
		return refuse(mcp.CodeInvalidParams, "completion/complete needs params.ref of type ref/prompt or ref/resource")
	}
	return nil
}
