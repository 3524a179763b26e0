// Command conformanceclient is the client the official conformance
// suite's client scenarios drive (`conformance client --command
// conformanceclient --scenario NAME`): for the server URL it is given, it
// declares a server in mcp.hcl, runs the real `mcpform apply` and
// `mcpform run` against it (the binary in $MCPFORM), and calls a tool
// through the proxy. An auth/ scenario's server is declared with
// auth { oauth = true } and signed in to with the real `mcpform login`
// first; there it stands in for the user's browser only: with -browse URL
// it is $BROWSER, and follows the authorization server's redirect (which
// the suite's servers send at once) to the loopback address mcpform login
// listens on.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-browse" {
		if err := browse(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "conformanceclient -browse:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: conformanceclient SERVER_URL (MCPFORM names the mcpform binary, MCP_CONFORMANCE_SCENARIO the scenario)")
		os.Exit(2)
	}
	if err := run(os.Args[len(os.Args)-1]); err != nil {
		fmt.Fprintln(os.Stderr, "conformanceclient:", err)
		os.Exit(1)
	}
}

// browse is the browser: it asks for the authorization URL, and takes the
// redirect it answers with to the callback.
func browse(authURL string) error {
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(authURL)
	if err != nil {
		return err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if loc == "" {
		return fmt.Errorf("the authorization endpoint answered %d without a redirect", resp.StatusCode)
	}
	resp, err = client.Get(loc)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func run(serverURL string) error {
	mcpform := os.Getenv("MCPFORM")
	if mcpform == "" {
		return errors.New("MCPFORM is not set")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var context map[string]any
	if c := os.Getenv("MCP_CONFORMANCE_CONTEXT"); c != "" {
		if err := json.Unmarshal([]byte(c), &context); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	dir, err := os.MkdirTemp("", "conformanceclient-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// Only an auth/ scenario has an authorization server: the others are
	// declared as a user would declare a server without one, and no
	// login is run.
	oauth := strings.HasPrefix(os.Getenv("MCP_CONFORMANCE_SCENARIO"), "auth/")
	env := append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "BROWSER="+self+" -browse")
	block := ""
	if !oauth {
		// The client scenarios' servers are hand-written servers of the
		// 2025 revisions that answer any request they do not know with
		// an empty result, server/discover too: the era is declared, as
		// a user would for such a server, not detected.
		block = "  protocol = \"legacy\"\n"
	}
	if oauth {
		auth := "    oauth = true\n    client_metadata_url = \"https://conformance-test.local/client-metadata.json\"\n"
		if id, ok := context["client_id"].(string); ok {
			auth += fmt.Sprintf("    client_id = %q\n", id)
			if secret, ok := context["client_secret"].(string); ok {
				auth += "    client_secret_env = \"CONFORMANCE_CLIENT_SECRET\"\n"
				env = append(env, "CONFORMANCE_CLIENT_SECRET="+secret)
			}
		}
		block = "  auth {\n" + auth + "  }\n"
	}
	hcl := fmt.Sprintf("server \"conformance\" {\n  url = %q\n%s}\n", serverURL, block)
	if err := os.WriteFile(filepath.Join(dir, "mcp.hcl"), []byte(hcl), 0o644); err != nil {
		return err
	}
	mcpformDo := func(args ...string) error {
		cmd := exec.Command(mcpform, args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("mcpform %s: %v", strings.Join(args, " "), err)
		}
		return nil
	}
	relogin := func() error { return errors.New("the server asked for a login, and it has no auth block") }
	if oauth {
		if err := mcpformDo("login", "conformance"); err != nil {
			return err
		}
		relogin = func() error { return mcpformDo("login", "conformance") }
	}
	if err := mcpformDo("apply", "-auto-approve"); err != nil {
		return err
	}
	return callThrough(mcpform, dir, env, context, relogin)
}

// callThrough starts `mcpform run`, lists the tools through it and calls
// the first (a server with none is only initialized and listed), with the
// arguments its schema requires (arguments). A call refused for want of
// scope (step-up) is made once more after relogin, as a user told to run
// mcpform login would.
func callThrough(mcpform, dir string, env []string, context map[string]any, relogin func() error) error {
	cmd := exec.Command(mcpform, "run", "-audit", filepath.Join(dir, "audit.jsonl"), "conformance")
	cmd.Dir, cmd.Env, cmd.Stderr = dir, env, os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { in.Close(); cmd.Wait() }()
	lines := bufio.NewReader(out)
	id := 0
	call := func(method string, params any) (json.RawMessage, error) {
		id++
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := in.Write(append(b, '\n')); err != nil {
			return nil, err
		}
		for {
			line, err := lines.ReadBytes('\n')
			if err != nil {
				return nil, fmt.Errorf("%s: %v", method, err)
			}
			var msg struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(line, &msg) != nil || msg.ID == nil || *msg.ID != id || msg.Method != "" {
				continue // a notification, or a request of the server's
			}
			if msg.Error != nil {
				return nil, fmt.Errorf("%s: %s", method, msg.Error.Message)
			}
			return msg.Result, nil
		}
	}
	notify := func(method string) error {
		_, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"`+method+`"}`+"\n")
		return err
	}
	init, err := call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "conformanceclient", "version": "1"}})
	if err != nil {
		return err
	}
	if err := notify("notifications/initialized"); err != nil {
		return err
	}
	var caps struct {
		Capabilities struct {
			Tools json.RawMessage `json:"tools"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(init, &caps) != nil || caps.Capabilities.Tools == nil {
		return nil // a server without tools: the handshake was all there is
	}
	res, err := call("tools/list", map[string]any{})
	if err != nil {
		return err
	}
	var tools struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &tools); err != nil || tools.Tools == nil {
		return fmt.Errorf("tools/list through mcpform run: %s", res)
	}
	if len(tools.Tools) == 0 {
		return nil
	}
	tool := tools.Tools[0]
	params := map[string]any{"name": tool.Name, "arguments": arguments(tool.InputSchema, context)}
	_, err = call("tools/call", params)
	if err != nil && strings.Contains(err.Error(), "mcpform login") {
		if err := relogin(); err != nil {
			return err
		}
		_, err = call("tools/call", params)
	}
	return err
}

// arguments are a call's arguments for a tool's input schema: the
// scenario's own (MCP_CONFORMANCE_CONTEXT's "arguments") when it gives
// them, else a value of its type for each required property, as a user
// would fill in the form.
func arguments(schema json.RawMessage, context map[string]any) map[string]any {
	if given, ok := context["arguments"].(map[string]any); ok {
		return given
	}
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(schema, &s)
	args := map[string]any{}
	for i, name := range s.Required {
		switch t, _ := s.Properties[name].Type.(string); t {
		case "number", "integer":
			args[name] = i + 2
		case "boolean":
			args[name] = true
		case "array":
			args[name] = []any{}
		case "object":
			args[name] = map[string]any{}
		default:
			args[name] = "conformance"
		}
	}
	return args
}
