package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpform/mcpform/internal/npmtest"
	"github.com/mcpform/mcpform/mcp"
)

// The official conformance suite (@modelcontextprotocol/conformance, server
// mode, pinned in testdata/npm with the Node 22 it needs) runs against the
// npm reference server-everything twice: direct, and through the mcpform
// binary, each behind the same stdio→Streamable HTTP bridge (supergateway).
// Every scenario that passes direct passes through mcpform run, unless it
// needs an item the lock does not hold (the suite asks for its own test_*
// tools and test:// resources, which server-everything does not serve and
// mcpform therefore refuses as not locked): those are listed, with the
// refusal.
func TestConformanceThroughRun(t *testing.T) {
	conformance := npmtest.Bin(t, "conformance")
	gateway := npmtest.Bin(t, "supergateway")
	npmtest.Bin(t, "node") // Node 22, first on the suite's PATH
	everything := npmtest.Bin(t, "mcp-server-everything")
	mcpform, _ := built(t)
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "mcp.lock")
	lockServer(t, lockPath, "everything", []string{everything, "stdio"}, []string{"PATH"}, mcp.EraAuto)

	direct := runConformance(t, conformance, gateway, everything+" stdio", filepath.Join(dir, "direct"))
	through := runConformance(t, conformance, gateway, fmt.Sprintf("%s run -lock %s -audit %s everything", mcpform, lockPath, filepath.Join(dir, "audit.jsonl")), filepath.Join(dir, "run"))

	var compared, refused []string
	for _, name := range sortedKeys(direct) {
		if direct[name] != "" {
			continue // fails direct: nothing to compare
		}
		compared = append(compared, name)
		why, ok := through[name]
		switch {
		case !ok:
			t.Errorf("scenario %s passes direct and did not run through mcpform run", name)
		case why == "":
		case lockRefusal(why):
			refused = append(refused, name+": "+why)
		default:
			t.Errorf("scenario %s passes direct and fails through mcpform run: %s", name, why)
		}
	}
	if len(compared)-len(refused) < 5 {
		t.Fatalf("only %d scenarios pass direct and through run (%v): the comparison shows nothing", len(compared)-len(refused), compared)
	}
	t.Logf("%d scenarios pass direct; through mcpform run all pass but %d, refused as not locked:\n  %s", len(compared), len(refused), strings.Join(refused, "\n  "))
}

// lockRefusal reports whether a scenario's failure is mcpform refusing an
// item the lock does not hold.
func lockRefusal(why string) bool {
	for _, s := range []string{"unknown tool", "unknown resource", "unknown prompt"} {
		if strings.Contains(why, s) {
			return true
		}
	}
	return false
}

// runConformance serves server (a command line) over Streamable HTTP with
// supergateway, runs the suite's server scenarios against it, and returns
// each scenario's outcome: "" passed, else the first failure's message.
func runConformance(t *testing.T, conformance, gateway, server, out string) map[string]string {
	t.Helper()
	port := freePort(t)
	path := "PATH=" + npmtest.BinDir() + string(os.PathListSeparator) + os.Getenv("PATH")
	gw := exec.Command(gateway, "--stdio", server, "--outputTransport", "streamableHttp", "--stateful", "--port", port, "--streamableHttpPath", "/mcp")
	gw.Env = append(os.Environ(), path)
	var gwOut bytes.Buffer // chatty: shown only when the suite wrote nothing
	gw.Stdout, gw.Stderr = &gwOut, &gwOut
	if err := gw.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { gw.Process.Kill(); gw.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("supergateway did not listen on %s:\n%s", port, gwOut.Bytes())
		}
		time.Sleep(100 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, conformance, "server", "--url", "http://127.0.0.1:"+port+"/mcp", "-o", out)
	cmd.Env = append(os.Environ(), path)
	b, _ := cmd.CombinedOutput() // non-zero when any scenario fails, as some do direct
	results := map[string]string{}
	dirs, err := os.ReadDir(out)
	if err != nil {
		t.Fatalf("the conformance suite wrote no results: %v\n%s\nsupergateway:\n%s", err, b, gwOut.Bytes())
	}
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(out, d.Name(), "checks.json"))
		if err != nil {
			continue
		}
		var checks []struct {
			ID, Status, ErrorMessage string
		}
		if err := json.Unmarshal(data, &checks); err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		name := scenarioName(d.Name())
		results[name] = ""
		for _, c := range checks {
			if c.Status == "FAILURE" && results[name] == "" {
				results[name] = c.ID + ": " + c.ErrorMessage
			}
		}
	}
	if len(results) == 0 {
		t.Fatalf("the conformance suite ran no scenario:\n%s", b)
	}
	return results
}

// scenarioName is a result directory's scenario: server-NAME-TIMESTAMP.
func scenarioName(dir string) string {
	return resultStamp.ReplaceAllString(strings.TrimPrefix(dir, "server-"), "")
}

var resultStamp = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T[0-9-]+Z$`)

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
