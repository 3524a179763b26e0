package plan

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
)

// TestFinishAddsConfigDigest: against a lock whose entries have no
// configDigest (another writer's, or an older mcpform's), a plan that
// changes nothing of a server shows no change for it, notes that apply
// adds the digest, and has changes to apply (the lock is rewritten);
// the planned lock carries every entry's configDigest. A server the plan
// changes, or deletes, is not noted. Against a lock with configDigests
// the same plan has no changes.
func TestFinishAddsConfigDigest(t *testing.T) {
	declared := func(name string) *lang.Server {
		return &lang.Server{Name: name, Addr: "server." + name, Command: []string{"srv"}, Protocol: "auto", Timeout: 30 * time.Second}
	}
	written, err := lock.Marshal(&lock.File{Generator: "other", Servers: map[string]*lock.Entry{
		"same": withTools(t, "fetch"), "untargeted": withTools(t, "fetch"), "changed": withTools(t, "fetch"), "gone": withTools(t, "fetch"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	withoutDigests := regexp.MustCompile(`(?m)^\s*"configDigest": "sha256:[0-9a-f]{64}"\n`).ReplaceAll(written, nil)
	if bytes.Contains(withoutDigests, []byte("configDigest")) {
		t.Fatalf("the lock still has a configDigest:\n%s", withoutDigests)
	}
	for _, tc := range []struct {
		name string
		data []byte
		// adds is AddsConfigDigest for the plan of three servers,
		// addsOnly for a plan of "same" alone (the others kept as
		// locked, as -target keeps them).
		adds, addsOnly []string
	}{
		{"without configDigest", withoutDigests, []string{"same", "untargeted"}, []string{"changed", "gone", "same", "untargeted"}},
		{"with configDigest", written, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			current, err := lock.Parse(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			same := &ServerPlan{Name: "same", Addr: "server.same"}
			planServer(same, declared("same"), nil, current.Servers["same"], withTools(t, "fetch"), nil, nil)
			changed := &ServerPlan{Name: "changed", Addr: "server.changed"}
			planServer(changed, declared("changed"), nil, current.Servers["changed"], withTools(t, "fetch", "send"), nil, nil)
			gone := &ServerPlan{Name: "gone", Addr: "server.gone", Action: Delete}
			if same.Action != NoOp || len(same.Changes) != 0 || changed.Action != Update {
				t.Fatalf("same: %v %+v; changed: %v: the test's servers are not what it means", same.Action, same.Changes, changed.Action)
			}
			p := &Plan{Servers: []*ServerPlan{changed, gone, same}}
			if err := Finish(p, current, "mcpform test"); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.adds, p.AddsConfigDigest); diff != "" {
				t.Errorf("AddsConfigDigest (-want +got):\n%s", diff)
			}
			var wantNotes []string
			for _, n := range tc.adds {
				wantNotes = append(wantNotes, `server "`+n+`": the lock's entry has no configDigest; apply adds one (nothing of the server changes)`)
			}
			if diff := cmp.Diff(wantNotes, p.Notes); diff != "" {
				t.Errorf("Notes (-want +got):\n%s", diff)
			}
			if len(same.Changes) != 0 || same.Action != NoOp {
				t.Errorf("the unchanged server: %v %+v, want no change to review", same.Action, same.Changes)
			}
			if !p.HasChanges() {
				t.Error("HasChanges = false: apply would not write the lock (it changes: \"changed\" and \"gone\")")
			}
			planned, err := lock.Parse(p.PlannedLock)
			if err != nil {
				t.Fatal(err)
			}
			if len(planned.Notes) != 0 || bytes.Count(p.PlannedLock, []byte(`"configDigest"`)) != 3 {
				t.Errorf("the planned lock: notes %q, %d configDigests; want none and 3:\n%s", planned.Notes, bytes.Count(p.PlannedLock, []byte(`"configDigest"`)), p.PlannedLock)
			}

			// The same lock, and only the unchanged server planned: only
			// the configDigest is to write.
			same2 := &ServerPlan{Name: "same", Addr: "server.same"}
			planServer(same2, declared("same"), nil, current.Servers["same"], withTools(t, "fetch"), nil, nil)
			only := &Plan{Servers: []*ServerPlan{same2}}
			if err := Finish(only, current, "mcpform test"); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.addsOnly, only.AddsConfigDigest); diff != "" {
				t.Errorf("only the unchanged server planned: AddsConfigDigest (-want +got):\n%s", diff)
			}
			if only.HasChanges() != (tc.adds != nil) {
				t.Errorf("only the unchanged server planned: HasChanges = %t, want %t", only.HasChanges(), tc.adds != nil)
			}
			if tc.adds == nil && !bytes.Equal(only.PlannedLock, bytes.Replace(tc.data, []byte(`"generator": "other"`), []byte(`"generator": "mcpform test"`), 1)) {
				t.Errorf("with configDigests and nothing changed, the planned lock is not the lock:\n%s", only.PlannedLock)
			}
			if tc.adds != nil && !strings.Contains(string(only.PlannedLock), `"configDigest"`) {
				t.Errorf("the planned lock has no configDigest:\n%s", only.PlannedLock)
			}
		})
	}
}
