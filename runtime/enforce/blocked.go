package enforce

import (
	"fmt"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/jsonscan"
	"github.com/mcpform/mcpform/lock"
)

// CodeDrifted is the JSON-RPC error a request about a blocked item gets:
// the code of a quarantine (runtime.CodeQuarantined), since it is one,
// narrowed to the item.
const CodeDrifted = -32002

// Blocked is the set of a server's items whose live definition drifted
// from the lock (changed, added or removed) under on_drift =
// "block-changed": requests about them are refused, the rest of the locked
// surface is served. The zero value blocks nothing; a Blocked is not
// changed once built (Add returns a new one), so it may be shared.
type Blocked struct {
	items [4]map[string]rune // by lock.Kind: key -> '+', '-' or '~'
	n     int
}

// Add returns b with the item drifts of ds added (a nil b is empty);
// drifts that are not about one item are not Blocked's and are left out.
func (b *Blocked) Add(ds []lock.Drift) *Blocked {
	out := &Blocked{}
	if b != nil {
		for k, m := range b.items {
			for key, a := range m {
				out.put(lock.Kind(k), key, a)
			}
		}
	}
	for _, d := range ds {
		if d.IsItem() {
			out.put(d.Kind, d.Key, d.Action)
		}
	}
	return out
}

func (b *Blocked) put(k lock.Kind, key string, action rune) {
	if b.items[k] == nil {
		b.items[k] = map[string]rune{}
	}
	if _, ok := b.items[k][key]; !ok {
		b.n++
	}
	b.items[k][key] = action
}

// Len is how many items are blocked.
func (b *Blocked) Len() int {
	if b == nil {
		return 0
	}
	return b.n
}

// Has reports whether the item of kind k keyed key is blocked.
func (b *Blocked) Has(k lock.Kind, key string) bool {
	if b == nil || b.items[k] == nil {
		return false
	}
	_, ok := b.items[k][key]
	return ok
}

// Without returns a copy of e without the blocked items: what the client
// may still see and call. e is left as it is.
func (b *Blocked) Without(e *lock.Entry) *lock.Entry {
	out := *e
	for _, k := range lock.Kinds {
		var keep []lock.Item
		for _, it := range e.List(k) {
			if !b.Has(k, it.Key) {
				keep = append(keep, it)
			}
		}
		if keep == nil {
			keep = []lock.Item{}
		}
		out.SetList(k, keep)
	}
	return &out
}

// Check returns the refusal of a request about a blocked item, or nil:
// a tools/call or prompts/get of a blocked name, a resources/read,
// subscribe or unsubscribe of a blocked URI, or of a URI that only blocked
// templates match, and a completion/complete about a blocked prompt or
// template. The error names the item and says it drifted from the lock.
// view is the entry as the client may see it (expose applied, nothing
// blocked): only its items are told of, so a hidden item's drift does not
// reveal that it exists, and an added item, which is not in it, stays an
// unknown one for the enforce checks.
func (b *Blocked) Check(c *Call, view *lock.Entry) *Refusal {
	if b.Len() == 0 {
		return nil
	}
	kind, key := c.Kind, c.Item
	switch {
	case c.Method == "completion/complete":
		ref := jsonscan.Find(c.Params, "ref")
		typ, _ := jsonscan.String(jsonscan.Find(ref, "type"))
		switch typ {
		case "ref/prompt":
			kind = lock.Prompts
			key, _ = jsonscan.String(jsonscan.Find(ref, "name"))
		case "ref/resource":
			kind = lock.Resources
			key, _ = jsonscan.String(jsonscan.Find(ref, "uri"))
			if _, ok := view.Find(lock.ResourceTemplates, key); ok {
				kind = lock.ResourceTemplates
			}
		default:
			return nil
		}
	case !c.HasItem:
		return nil
	}
	if _, seen := view.Find(kind, key); seen {
		if b.Has(kind, key) {
			return drifted(kind, key, b.items[kind][key])
		}
		return nil
	}
	if kind != lock.Resources {
		return nil
	}
	// A URI no resource of view names: allowed through a template, unless
	// every template of view that matches it is blocked.
	hit := ""
	for _, t := range view.ResourceTemplates {
		if !matchTemplate(t.Key, key) {
			continue
		}
		if !b.Has(lock.ResourceTemplates, t.Key) {
			return nil
		}
		if hit == "" {
			hit = t.Key
		}
	}
	if hit != "" {
		return drifted(lock.ResourceTemplates, hit, b.items[lock.ResourceTemplates][hit])
	}
	return nil
}

func drifted(k lock.Kind, key string, action rune) *Refusal {
	what := map[rune]string{'+': "was added to the live server and is not in mcp.lock", '-': "is gone from the live server", '~': "changed on the live server"}[action]
	return refuse(CodeDrifted, fmt.Sprintf("mcpform blocked %s %q: it drifted from mcp.lock (it %s). Run `mcpform plan` to review the change (and `mcpform apply` to accept it)", kindName(k), escape.String(key), what))
}

func kindName(k lock.Kind) string {
	switch k {
	case lock.Tools:
		return "tool"
	case lock.Prompts:
		return "prompt"
	case lock.Resources:
		return "resource"
	}
	return "resource template"
}
