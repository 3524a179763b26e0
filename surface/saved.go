package surface

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcpform/mcpform/internal/lockedfile"
	"github.com/mcpform/mcpform/internal/strictjson"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
)

// MaxSavedFile bounds each file ReadSaved reads: a list far larger than
// any server's (a tools/list of 10,000 tools is a few MB).
const MaxSavedFile = 64 << 20

// Saved is a surface captured elsewhere: the lists a server answered
// (tools/list, prompts/list, resources/list, resources/templates/list),
// read from files instead of a probe. Lists holds the items of each kind
// that was saved, exactly as the server sent them; a kind not saved has
// no key (which is not the same as a saved empty list).
type Saved struct {
	Lists map[lock.Kind][]json.RawMessage
}

// savedFiles are the names a directory of saved lists may hold.
var savedFiles = map[string]lock.Kind{
	"tools.json":              lock.Tools,
	"prompts.json":            lock.Prompts,
	"resources.json":          lock.Resources,
	"resource-templates.json": lock.ResourceTemplates,
}

// ReadSaved reads a saved surface: a file holding one list, or a
// directory of them named tools.json, prompts.json, resources.json and
// resource-templates.json (any of them; no other .json file). A file is
// the whole JSON-RPC response to a list request, its bare result, or the
// bare array of items (a tools array, in a file of any other name).
func ReadSaved(path string) (*Saved, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	s := &Saved{Lists: map[lock.Kind][]json.RawMessage{}}
	if !st.IsDir() {
		k, items, err := readList(path, lock.Tools, false)
		if err != nil {
			return nil, err
		}
		s.Lists[k] = items
		return s, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		want, ok := savedFiles[e.Name()]
		if !ok {
			return nil, fmt.Errorf("%s: a directory of saved lists holds only %s; rename or remove %s",
				path, strings.Join(savedNames(), ", "), e.Name())
		}
		_, items, err := readList(filepath.Join(path, e.Name()), want, true)
		if err != nil {
			return nil, err
		}
		s.Lists[want] = items
	}
	if len(s.Lists) == 0 {
		return nil, fmt.Errorf("%s holds no saved list: write the results as %s", path, strings.Join(savedNames(), ", "))
	}
	return s, nil
}

func savedNames() []string {
	var names []string
	for n := range savedFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// readList reads one saved list. A bare array is of kind def; named says
// the file's name fixed its kind, which a result's list key must match.
func readList(path string, def lock.Kind, named bool) (lock.Kind, []json.RawMessage, error) {
	data, err := lockedfile.ReadRegular(path, MaxSavedFile)
	if err != nil {
		return 0, nil, err
	}
	k, items, err := ParseSaved(data, def, named)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, items, nil
}

// ParseSaved reads one saved list from data: a JSON-RPC response to a
// list request, its result, or a bare array of items (of kind def). When
// named, the list must be of kind def. It refuses what a probe would not
// take: invalid or duplicate-keyed JSON, an error response, a page with a
// nextCursor (the rest of the list is missing), an item that is not an
// object with its key, and two items with one key.
func ParseSaved(data []byte, def lock.Kind, named bool) (lock.Kind, []json.RawMessage, error) {
	if err := strictjson.Check(data); err != nil {
		return 0, nil, fmt.Errorf("not one JSON value mcpform can trust: %w", err)
	}
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		items, err := savedItems(def, data)
		return def, items, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return 0, nil, errors.New("neither a list result nor an array of items")
	}
	if _, ok := obj["jsonrpc"]; ok {
		if _, ok := obj["error"]; ok {
			return 0, nil, errors.New("the saved response is an error, not a list: save the response to a list request that succeeded")
		}
		res, ok := obj["result"]
		if !ok {
			return 0, nil, errors.New("the saved JSON-RPC message has no result")
		}
		obj = nil
		if err := json.Unmarshal(res, &obj); err != nil || obj == nil {
			return 0, nil, errors.New("the saved response's result is not an object")
		}
	}
	if c, ok := obj["nextCursor"]; ok && string(c) != "null" && string(c) != `""` {
		return 0, nil, errors.New("the saved result is one page of a longer list (it has a nextCursor): save every page's items as one array")
	}
	var found []lock.Kind
	for _, k := range lock.Kinds {
		if _, ok := obj[k.Field()]; ok {
			found = append(found, k)
		}
	}
	switch {
	case len(found) == 0:
		return 0, nil, errors.New(`the saved result has no list ("tools", "prompts", "resources" or "resourceTemplates")`)
	case len(found) > 1:
		return 0, nil, errors.New("the saved result has more than one list: save each list in its own file")
	case named && found[0] != def:
		return 0, nil, fmt.Errorf("the file is named for %s but holds %s", def.Field(), found[0].Field())
	}
	items, err := savedItems(found[0], obj[found[0].Field()])
	return found[0], items, err
}

// savedItems splits a saved array into its items, each checked as a probe
// checks what a server lists.
func savedItems(k lock.Kind, raw json.RawMessage) ([]json.RawMessage, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%s is not an array", k.Field())
	}
	seen := map[string]bool{}
	for i, it := range items {
		item, err := lock.NewItem(k, it)
		if err != nil {
			return nil, &lock.ItemError{Kind: k, Key: item.Key, Index: i, Err: err}
		}
		if seen[item.Key] {
			return nil, fmt.Errorf("%s lists %q twice", k.Field(), item.Key)
		}
		seen[item.Key] = true
	}
	return items, nil
}

// Overlay is the locked entry with the saved lists in place of its own:
// the surface the server would show a probe if it answered the saved
// lists, and everything else (era, server info, instructions,
// capabilities) as locked. It is sealed, and so goes through the same
// conversion a probed surface does.
func Overlay(locked *lock.Entry, s *Saved) (*lock.Entry, error) {
	live := &mcp.Surface{
		Era:               mcp.EraLegacy,
		ProtocolVersion:   locked.ProtocolVersion,
		SupportedVersions: locked.SupportedVersions,
		ServerInfo:        locked.ServerInfo,
		Instructions:      locked.Instructions,
		Capabilities:      locked.Capabilities,
	}
	if locked.Modern() {
		live.Era = mcp.EraModern
	}
	if locked.Remote != nil {
		live.Transport = locked.Remote.Transport
	}
	lists := map[lock.Kind]*[]json.RawMessage{
		lock.Tools: &live.Tools, lock.Prompts: &live.Prompts, lock.Resources: &live.Resources, lock.ResourceTemplates: &live.ResourceTemplates,
	}
	for _, k := range lock.Kinds {
		items, ok := s.Lists[k]
		if !ok {
			for _, it := range locked.List(k) {
				items = append(items, it.JSON)
			}
		}
		*lists[k] = items
	}
	return Entry(live)
}
