package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// actionFile is action.yml, the repository's GitHub Action.
type actionFile struct {
	Name   string `yaml:"name"`
	Inputs map[string]struct {
		Description string `yaml:"description"`
		Default     string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	Name             string            `yaml:"name"`
	ID               string            `yaml:"id"`
	If               string            `yaml:"if"`
	Shell            string            `yaml:"shell"`
	Run              string            `yaml:"run"`
	Uses             string            `yaml:"uses"`
	WorkingDirectory string            `yaml:"working-directory"`
	Env              map[string]string `yaml:"env"`
	With             map[string]string `yaml:"with"`
}

func readAction(t *testing.T) *actionFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return &a
}

func (a *actionFile) step(t *testing.T, name string) actionStep {
	t.Helper()
	for _, s := range a.Runs.Steps {
		if s.Name == name || (s.ID != "" && s.ID == name) {
			return s
		}
	}
	t.Fatalf("action.yml has no step %q", name)
	return actionStep{}
}

var (
	exprRE        = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)
	inputRefRE    = regexp.MustCompile(`\binputs\.([A-Za-z0-9_-]+)`)
	stepOutputRE  = regexp.MustCompile(`\bsteps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)`)
	pinnedUsesRE  = regexp.MustCompile(`^[\w.-]+/[\w./-]+@(v\d+(\.\d+){0,2}|[0-9a-f]{40})$`)
	outputWriteRE = regexp.MustCompile(`echo "([a-z-]+)=`)
)

// TestAction checks action.yml as a whole: a composite action with the
// inputs the README documents; every input, step and step output an
// expression names exists; no run script has an expression spliced into it
// (values come through env, so an input cannot inject shell); every action
// it uses is pinned to a version or a commit. TestRelease/action runs its
// steps.
func TestAction(t *testing.T) {
	a := readAction(t)
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using is %q, want composite", a.Runs.Using)
	}
	for _, in := range []string{"version", "command", "working-directory", "comment", "sarif"} {
		if _, ok := a.Inputs[in]; !ok {
			t.Errorf("action.yml has no input %q", in)
		}
	}
	if d := a.Inputs["command"].Default; d != "plan" {
		t.Errorf("command's default is %q, want plan", d)
	}
	if d := a.Inputs["version"].Default; d != "" {
		t.Errorf("version's default is %q: a release must be pinned, or the action's own tag used", d)
	}
	ids := map[string]map[string]bool{}
	for _, s := range a.Runs.Steps {
		if s.ID == "" {
			continue
		}
		ids[s.ID] = map[string]bool{}
		for _, m := range outputWriteRE.FindAllStringSubmatch(s.Run, -1) {
			ids[s.ID][m[1]] = true
		}
	}
	var exprs []string
	for _, o := range a.Outputs {
		exprs = append(exprs, o.Value)
	}
	for _, s := range a.Runs.Steps {
		if s.Shell != "" && s.Shell != "bash" {
			t.Errorf("step %q runs in %s: the scripts are bash", s.Name, s.Shell)
		}
		if s.Run != "" && strings.Contains(s.Run, "${{") {
			t.Errorf("step %q splices an expression into its script: pass it through env", s.Name)
		}
		if s.Uses != "" && !pinnedUsesRE.MatchString(s.Uses) {
			t.Errorf("step %q uses %q: pin a version tag or a commit", s.Name, s.Uses)
		}
		exprs = append(exprs, s.Name, "${{ "+s.If+" }}", s.WorkingDirectory)
		for _, v := range s.Env {
			exprs = append(exprs, v)
		}
		for _, v := range s.With {
			exprs = append(exprs, v)
		}
	}
	for _, e := range exprs {
		for _, m := range exprRE.FindAllStringSubmatch(e, -1) {
			for _, in := range inputRefRE.FindAllStringSubmatch(m[1], -1) {
				if _, ok := a.Inputs[in[1]]; !ok {
					t.Errorf("%q names input %q, which action.yml does not declare", m[0], in[1])
				}
			}
			for _, so := range stepOutputRE.FindAllStringSubmatch(m[1], -1) {
				if outs, ok := ids[so[1]]; !ok || !outs[so[2]] {
					t.Errorf("%q names steps.%s.outputs.%s, which no step writes", m[0], so[1], so[2])
				}
			}
		}
	}
}

// runnerEnv is a GitHub runner's environment for one step: the files the
// runner reads back, RUNNER_TEMP, and the step's env (each key must be
// given a value by the test, so a new env key needs a test change).
type runnerEnv struct {
	t                               *testing.T
	temp, output, path, summary, ws string
}

func newRunner(t *testing.T) *runnerEnv {
	dir := t.TempDir()
	r := &runnerEnv{t: t, temp: filepath.Join(dir, "runner-temp"), ws: filepath.Join(dir, "workspace"),
		output: filepath.Join(dir, "output"), path: filepath.Join(dir, "path"), summary: filepath.Join(dir, "summary")}
	for _, d := range []string{r.temp, r.ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// run runs a step's script as the runner would (bash, in its
// working-directory under the workspace) with values for its env keys, and
// returns its combined output, its exit error and the outputs it wrote.
func (r *runnerEnv) run(s actionStep, values map[string]string, extraEnv ...string) (string, map[string]string, error) {
	r.t.Helper()
	os.Remove(r.output)
	env := append(os.Environ(), "RUNNER_TEMP="+r.temp, "GITHUB_OUTPUT="+r.output, "GITHUB_PATH="+r.path,
		"GITHUB_STEP_SUMMARY="+r.summary, "GITHUB_WORKSPACE="+r.ws)
	for k := range s.Env {
		v, ok := values[k]
		if !ok {
			r.t.Fatalf("step %q has env %s, which the test gives no value", s.Name, k)
		}
		env = append(env, k+"="+v)
	}
	cmd := exec.Command("bash", "-e", "-c", s.Run)
	cmd.Env = append(env, extraEnv...)
	cmd.Dir = r.ws
	if s.WorkingDirectory != "" {
		cmd.Dir = filepath.Join(r.ws, values["working-directory"])
	}
	out, err := cmd.CombinedOutput()
	outputs := map[string]string{}
	data, _ := os.ReadFile(r.output)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			outputs[k] = v
		}
	}
	return string(out), outputs, err
}

// testActionSteps runs action.yml's steps against the snapshot release in
// dist, served from a file:// mirror (MCPFORM_DOWNLOAD_URL): the install
// step checks the archive's checksum and refuses a tampered one; the plan
// step runs the installed mcpform with the flags the action passes (each
// a flag of the built CLI's own help) on a fake server, writing the
// markdown and SARIF; the comment step posts it through a stand-in gh; the
// verify step passes after apply and fails on drift.
func testActionSteps(t *testing.T, dist, version string) {
	a := readAction(t)
	mirror := t.TempDir()
	tagDir := filepath.Join(mirror, "v"+version)
	if err := os.MkdirAll(tagDir, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dist)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dist, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(tagDir, e.Name()), data, 0o644)
	}
	mirrorEnv := "MCPFORM_DOWNLOAD_URL=file://" + mirror
	osName := map[string]string{"linux": "Linux", "darwin": "macOS", "windows": "Windows"}[runtime.GOOS]
	archName := map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	install := a.step(t, "install")
	r := newRunner(t)
	installValues := map[string]string{"INPUT_VERSION": "v" + version, "ACTION_REF": "main", "ACTION_REPOSITORY": "mcpform/mcpform",
		"OS": osName, "ARCH": archName, "GH_TOKEN": ""}

	out, outputs, err := r.run(install, installValues, mirrorEnv)
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	bin := outputs["path"]
	if got, _ := os.ReadFile(r.path); strings.TrimSpace(string(got)) != filepath.Dir(bin) {
		t.Errorf("install added %q to GITHUB_PATH, want %q", got, filepath.Dir(bin))
	}

	// Without a version, the action's own tag is the version; a branch is
	// not one, and neither is "latest".
	noVersion := map[string]string{}
	for k, v := range installValues {
		noVersion[k] = v
	}
	noVersion["INPUT_VERSION"] = ""
	if out, _, err := newRunner(t).run(install, noVersion, mirrorEnv); err == nil || !strings.Contains(out, "set the version input") {
		t.Errorf("install from a branch without a version: err %v\n%s", err, out)
	}
	noVersion["ACTION_REF"] = "v" + version
	if out, _, err := newRunner(t).run(install, noVersion, mirrorEnv); err != nil {
		t.Errorf("install from the release's own tag without a version: %v\n%s", err, out)
	}
	noVersion["INPUT_VERSION"] = "latest"
	if out, _, err := newRunner(t).run(install, noVersion, mirrorEnv); err == nil || !strings.Contains(out, "pin a release") {
		t.Errorf("install of latest: err %v\n%s", err, out)
	}

	// A tampered archive is refused, and so is a release without its line.
	sums, _ := os.ReadFile(filepath.Join(tagDir, "checksums.txt"))
	tampered := []byte(regexp.MustCompile(`^[0-9a-f]`).ReplaceAllStringFunc(string(sums), func(s string) string {
		return map[bool]string{true: "1", false: "0"}[s == "0"]
	}))
	os.WriteFile(filepath.Join(tagDir, "checksums.txt"), tampered, 0o644)
	if out, _, err := newRunner(t).run(install, installValues, mirrorEnv); err == nil || !strings.Contains(out, "FAILED") {
		t.Errorf("install with a wrong checksum: err %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(tagDir, "checksums.txt"), nil, 0o644)
	if out, _, err := newRunner(t).run(install, installValues, mirrorEnv); err == nil || !strings.Contains(out, "has no line for") {
		t.Errorf("install without a checksum line: err %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(tagDir, "checksums.txt"), sums, 0o644)

	// The plan step, through a recorder that logs each mcpform command line.
	recorder := filepath.Join(t.TempDir(), "mcpform-recorder")
	argvLog := recorder + ".log"
	os.WriteFile(recorder, []byte("#!/bin/sh\nprintf '%s\\n' \"$*\" >>"+shellQuote(argvLog)+"\nexec "+shellQuote(bin)+" \"$@\"\n"), 0o755)
	dir := filepath.Join(r.ws, "infra")
	writeFiles(t, dir, map[string]string{
		"mcp.hcl":      "server \"time\" {\n  command = [\"fakemcp\", \"surface.json\"]\n}\n",
		"surface.json": `{"serverInfo": {"name": "time", "version": "1.0.0"}, "tools": [{"name": "get_time", "description": "Get the time.", "inputSchema": {"type": "object"}}]}`,
	})
	runStep := a.step(t, "run")
	planValues := map[string]string{"MCPFORM": recorder, "COMMAND": "plan", "SARIF": "true", "ARGS": "-parallelism 2", "working-directory": "infra"}
	out, outputs, err = r.run(runStep, planValues)
	if err != nil {
		t.Fatalf("plan step: %v\n%s", err, out)
	}
	if outputs["exitcode"] != "2" || outputs["has-changes"] != "true" {
		t.Errorf("plan step on a first plan: outputs %v, want exitcode 2 and has-changes true\n%s", outputs, out)
	}
	if !strings.Contains(out, `+ tool "get_time" {`) {
		t.Errorf("the plan step does not print the whole plan in the job's log (show PLANFILE):\n%s", out)
	}
	md, _ := os.ReadFile(outputs["markdown"])
	if !bytes.Contains(md, []byte("get_time")) {
		t.Errorf("plan.md does not show the new tool:\n%s", md)
	}
	if sarif, err := os.ReadFile(outputs["sarif"]); err != nil || !bytes.Contains(sarif, []byte(`"MCP-TOOL-ADDED"`)) {
		t.Errorf("the SARIF output (%v) has no MCP-TOOL-ADDED result:\n%s", err, sarif)
	}
	if summary, _ := os.ReadFile(r.summary); !bytes.Equal(summary, md) {
		t.Errorf("the step summary is not the plan's markdown")
	}

	// The comment step posts the plan through gh, or updates its comment.
	ghDir := t.TempDir()
	ghLog, ghBody := filepath.Join(ghDir, "gh.log"), filepath.Join(ghDir, "body.md")
	os.WriteFile(filepath.Join(ghDir, "gh"), []byte(`#!/bin/sh
printf '%s\n' "$*" >>"$GH_LOG"
case "$*" in *--paginate*) printf '%s' "$GH_EXISTING"; exit 0 ;; esac
for a; do case "$a" in body=@*) cp "${a#body=@}" "$GH_BODY" ;; esac; done
`), 0o755)
	comment := a.step(t, "Post the plan on the pull request")
	commentValues := map[string]string{"GH_TOKEN": "t", "REPO": "o/r", "PR": "7", "EXITCODE": outputs["exitcode"],
		"PLAN": outputs["markdown"], "RUN_URL": "https://github.com/o/r/actions/runs/1"}
	ghEnv := []string{"PATH=" + ghDir + string(os.PathListSeparator) + os.Getenv("PATH"), "GH_LOG=" + ghLog, "GH_BODY=" + ghBody}
	if out, _, err := r.run(comment, commentValues, append(ghEnv, "GH_EXISTING=")...); err != nil {
		t.Fatalf("comment step: %v\n%s", err, out)
	}
	body, _ := os.ReadFile(ghBody)
	wantHead := "<!-- mcpform plan -->\nChanges to review before `mcpform apply`.\n\n"
	if !bytes.HasPrefix(body, []byte(wantHead)) || !bytes.HasSuffix(body, md) {
		t.Errorf("the comment is not the marker, the status and plan.md:\n%s", body)
	}
	if out, _, err := r.run(comment, commentValues, append(ghEnv, "GH_EXISTING=123")...); err != nil {
		t.Fatalf("comment step, updating: %v\n%s", err, out)
	}
	calls, _ := os.ReadFile(ghLog)
	if !strings.Contains(string(calls), "api -X POST repos/o/r/issues/7/comments") || !strings.Contains(string(calls), "api -X PATCH repos/o/r/issues/comments/123") {
		t.Errorf("gh calls: want a POST, then a PATCH of the existing comment:\n%s", calls)
	}

	// verify after apply passes; after the server changed, it fails with
	// verify's drift code, and the step with it.
	cmd := exec.Command(bin, "apply", "-auto-approve")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	verifyValues := map[string]string{"MCPFORM": recorder, "COMMAND": "verify", "SARIF": "true", "ARGS": "", "working-directory": "infra"}
	if out, outputs, err := r.run(runStep, verifyValues); err != nil || outputs["exitcode"] != "0" {
		t.Errorf("verify step after apply: %v, outputs %v\n%s", err, outputs, out)
	}
	writeFiles(t, dir, map[string]string{"surface.json": `{"serverInfo": {"name": "time", "version": "1.0.0"}, "tools": []}`})
	if out, outputs, err := r.run(runStep, verifyValues); err == nil || outputs["exitcode"] != "1" {
		t.Errorf("verify step after drift: %v, outputs %v, want exit 1\n%s", err, outputs, out)
	}
	if out, _, err := r.run(runStep, map[string]string{"MCPFORM": recorder, "COMMAND": "apply", "SARIF": "true", "ARGS": "", "working-directory": "infra"}); err == nil {
		t.Errorf("the run step ran command apply:\n%s", out)
	}

	// The failing-plan step fails on 1 and only then runs (its if).
	fail := a.step(t, "Fail on a failed plan")
	if out, _, err := r.run(fail, map[string]string{"EXITCODE": "1"}); err == nil {
		t.Errorf("the failing-plan step passed:\n%s", out)
	}
	for _, code := range []string{"0", "2"} {
		if !strings.Contains(fail.If, "!= '"+code+"'") {
			t.Errorf("the failing-plan step's if (%s) does not spare exit %s", fail.If, code)
		}
	}

	// Every command line the action ran is a real command with real flags,
	// by the built CLI's own help.
	logged, _ := os.ReadFile(argvLog)
	lines := strings.Split(strings.TrimSpace(string(logged)), "\n")
	if len(lines) < 4 {
		t.Fatalf("the recorder saw %d mcpform runs, want plan, show and two verifies: %q", len(lines), lines)
	}
	for _, line := range lines {
		checkInvocation(t, bin, "action.yml", strings.Fields(line))
	}
}

// checkInvocation fails unless args (a command and its arguments) name a
// command of the built CLI and every -flag among them is one its help lists.
func checkInvocation(t *testing.T, bin, where string, args []string) {
	t.Helper()
	if len(args) == 0 {
		t.Errorf("%s runs mcpform without a command", where)
		return
	}
	help, _ := exec.Command(bin, args[0], "-h").CombinedOutput()
	if !strings.Contains(string(help), "Usage: mcpform "+args[0]) {
		t.Errorf("%s runs `mcpform %s`, which the built CLI does not know:\n%s", where, args[0], help)
		return
	}
	flags := map[string]bool{}
	for line := range strings.SplitSeq(string(help), "\n") {
		if m := defaultsLine.FindStringSubmatch(line); m != nil {
			flags[m[1]] = true
		}
	}
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, _, _ := strings.Cut(a, "=")
		if !flags[name] {
			t.Errorf("%s runs `mcpform %s`: %s has no flag %s (help lists %v)", where, strings.Join(args, " "), args[0], name, keys(flags))
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// preCommitHook is one entry of .pre-commit-hooks.yaml.
type preCommitHook struct {
	ID            string `yaml:"id"`
	Entry         string `yaml:"entry"`
	Language      string `yaml:"language"`
	Files         string `yaml:"files"`
	PassFilenames *bool  `yaml:"pass_filenames"`
}

// TestPreCommitHooks checks .pre-commit-hooks.yaml: the fmt -check and
// validate hooks exist, each entry is a real command with real flags (by
// the CLI's own help), the file patterns pick what each reads, and each
// hook does its job when run as pre-commit runs it: fmt -check with the
// staged files passes formatted files and fails (exit 3) an unformatted
// one; validate, given no file names, passes a valid configuration and
// fails an invalid one.
func TestPreCommitHooks(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, ".pre-commit-hooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks []preCommitHook
	if err := yaml.Unmarshal(data, &hooks); err != nil {
		t.Fatalf(".pre-commit-hooks.yaml: %v", err)
	}
	byID := map[string]preCommitHook{}
	for _, h := range hooks {
		byID[h.ID] = h
	}
	bin, err := exec.LookPath("mcpform") // this test binary, as TestMain installs it
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"mcpform-fmt": "mcpform fmt -check", "mcpform-validate": "mcpform validate"} {
		h, ok := byID[id]
		if !ok {
			t.Errorf(".pre-commit-hooks.yaml has no hook %s", id)
			continue
		}
		if h.Entry != want {
			t.Errorf("%s runs %q, want %q", id, h.Entry, want)
		}
		if h.Language != "golang" && h.Language != "system" {
			t.Errorf("%s: language %q", id, h.Language)
		}
		fields := strings.Fields(h.Entry)
		if fields[0] != "mcpform" {
			t.Errorf("%s runs %s, not mcpform", id, fields[0])
			continue
		}
		checkInvocation(t, bin, ".pre-commit-hooks.yaml "+id, fields[1:])
	}
	fmtHook, validateHook := byID["mcpform-fmt"], byID["mcpform-validate"]
	if validateHook.PassFilenames == nil || *validateHook.PassFilenames {
		t.Errorf("mcpform-validate must set pass_filenames: false: validate takes a directory, not files")
	}
	for hook, names := range map[preCommitHook]map[string]bool{
		fmtHook:      {"mcp.hcl": true, "infra/team.mcp.hcl": true, "vars/ci.hcl": true, "mcp.lock": false, "README.md": false},
		validateHook: {"mcp.hcl": true, "infra/team.mcp.hcl": true, "mcp.lock": true, "vars/ci.hcl": false, "mcp.hcl.example": false},
	} {
		re, err := regexp.Compile(hook.Files)
		if err != nil {
			t.Errorf("%s: files: %v", hook.ID, err)
			continue
		}
		for name, want := range names {
			if got := re.MatchString(name); got != want {
				t.Errorf("%s: files %q matches %s: %v, want %v", hook.ID, hook.Files, name, got, want)
			}
		}
	}

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"mcp.hcl":    "server \"time\" {\n  command = [\"uvx\", \"mcp-server-time==2026.8.18\"]\n}\n",
		"ci.mcp.hcl": "server \"notes\" {\n  command = [\"notes\"]\n}\n",
		"bad.hcl":    "server \"x\" {\ncommand=[\"x\"]\n}\n",
	})
	hookRun := func(h preCommitHook, files ...string) int {
		args := strings.Fields(h.Entry)[1:]
		if h.PassFilenames == nil || *h.PassFilenames {
			args = append(args, files...)
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v\n%s", h.ID, err, out)
		}
		return 0
	}
	if code := hookRun(fmtHook, "mcp.hcl", "ci.mcp.hcl"); code != 0 {
		t.Errorf("mcpform-fmt on formatted files: exit %d", code)
	}
	if code := hookRun(fmtHook, "mcp.hcl", "bad.hcl"); code != 3 {
		t.Errorf("mcpform-fmt with an unformatted file: exit %d, want 3", code)
	}
	if code := hookRun(validateHook, "mcp.hcl"); code != 0 {
		t.Errorf("mcpform-validate on a valid configuration: exit %d", code)
	}
	writeFiles(t, dir, map[string]string{"ci.mcp.hcl": "server \"notes\" {\n  comand = [\"notes\"]\n}\n"})
	if code := hookRun(validateHook, "ci.mcp.hcl"); code == 0 {
		t.Errorf("mcpform-validate on an unknown argument: exit 0")
	}
}

// TestExampleWorkflowUsesAction checks that the GitHub Actions recipe runs
// mcpform through the repository's action, pinned to a release, with only
// inputs action.yml declares: plan on pull requests, verify on a schedule,
// and no compiling of mcpform.
func TestExampleWorkflowUsesAction(t *testing.T) {
	a := readAction(t)
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", "ci", "github-actions.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []actionStep `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("examples/ci/github-actions.yml: %v", err)
	}
	commands := map[string]string{}
	for job, j := range wf.Jobs {
		for _, s := range j.Steps {
			if strings.Contains(s.Run, "go install") || strings.Contains(s.Uses, "setup-go") {
				t.Errorf("job %s compiles mcpform (%q%q): use the action's release", job, s.Uses, s.Run)
			}
			ref, ok := strings.CutPrefix(s.Uses, "mcpform/mcpform@")
			if !ok {
				continue
			}
			if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(ref) && s.With["version"] == "" {
				t.Errorf("job %s uses mcpform/mcpform@%s without a release tag or a version input", job, ref)
			}
			for k := range s.With {
				if _, ok := a.Inputs[k]; !ok {
					t.Errorf("job %s gives the action input %q, which action.yml does not declare", job, k)
				}
			}
			commands[job] = s.With["command"]
		}
	}
	if commands["plan"] != "plan" || commands["verify"] != "verify" {
		t.Errorf("the recipe's jobs run the action with %v, want plan: plan and verify: verify", commands)
	}
}
