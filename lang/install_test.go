package lang

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// gitRepo is a real git repository made for a test.
type gitRepo struct {
	t   *testing.T
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := &gitRepo{t: t, dir: filepath.Join(t.TempDir(), "mods")}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r.git("init", "--quiet", "--initial-branch=main")
	return r
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files, commits them and tags the commit.
func (r *gitRepo) commit(tag string, files map[string]string) string {
	r.t.Helper()
	writeTree(r.t, r.dir, files)
	r.git("add", "-A")
	r.git("commit", "--quiet", "-m", tag)
	r.git("tag", tag)
	return r.git("rev-parse", "HEAD")
}

func (r *gitRepo) url() string { return "file://" + filepath.ToSlash(r.dir) }

func TestGitModules(t *testing.T) {
	repo := newGitRepo(t)
	v1 := repo.commit("v1.0.0", map[string]string{
		"github/mcp.hcl": `
variable "token_env" { type = string }
server "issues" {
  command = ["node", "${path.module}/issues.js"]
  env     = [var.token_env]
}
module "ci" {
  source = "./ci"
}
`,
		"github/ci/mcp.hcl": `server "runs" { command = ["node", "runs.js"] }`,
		"other/mcp.hcl":     `server "other" { command = ["other"] }`,
	})
	source := "git::" + repo.url() + "//github?ref=v1.0.0"
	root := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": `
module "github" {
  source    = "` + source + `"
  token_env = "GITHUB_TOKEN"
}
`,
	})

	// Before init: a clear error that says what to do.
	cfg, diags := Load(root, Options{})
	if diff := cmp.Diff([]string{"Module not installed"}, errorsOf(diags)); diff != "" {
		t.Fatalf("before init (-want +got):\n%s", diff)
	}
	if !strings.Contains(diags[0].Detail, `Run "mcpform init"`) || diags[0].Subject == nil || diags[0].Subject.Start.Line != 3 {
		t.Errorf("diagnostic does not point at the source and say run mcpform init: %+v", diags[0])
	}
	_ = cfg

	var log strings.Builder
	entries, _, diags := InstallModules(context.Background(), root, InstallOptions{Log: &log})
	if diags.HasErrors() {
		t.Fatalf("InstallModules: %v", diags)
	}
	wantEntries := []ManifestEntry{{Key: "github", Source: source, Ref: "v1.0.0", Commit: v1, Dir: ".mcpform/modules/github"}}
	if diff := cmp.Diff(wantEntries, entries); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	var m manifest
	b, err := os.ReadFile(filepath.Join(root, ".mcpform", "modules", "modules.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantEntries, m.Modules); diff != "" {
		t.Errorf("modules.json (-want +got):\n%s", diff)
	}
	if !strings.Contains(log.String(), "fetched "+repo.url()+" at v1.0.0") {
		t.Errorf("log = %q", log.String())
	}
	if _, err := os.Stat(filepath.Join(root, ".mcpform", "modules", "github", ".git")); !os.IsNotExist(err) {
		t.Errorf("the fetched module keeps its .git directory (err %v)", err)
	}

	// After init, Load works offline: move the repository away meanwhile.
	if err := os.Rename(repo.dir, repo.dir+"-away"); err != nil {
		t.Fatal(err)
	}
	cfg = mustLoad(t, root, Options{})
	if err := os.Rename(repo.dir+"-away", repo.dir); err != nil {
		t.Fatal(err)
	}
	var names, args []string
	for _, s := range cfg.Servers {
		names = append(names, s.Addr)
		args = append(args, s.Command[len(s.Command)-1])
	}
	if diff := cmp.Diff([]string{"module.github.module.ci.server.runs", "module.github.server.issues"}, names); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"runs.js", ".mcpform/modules/github/github/issues.js"}, args); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}

	// init again: nothing to fetch.
	log.Reset()
	if _, _, diags := InstallModules(context.Background(), root, InstallOptions{Log: &log}); diags.HasErrors() {
		t.Fatal(diags)
	}
	if !strings.Contains(log.String(), "already fetched") {
		t.Errorf("second init log = %q, want already fetched", log.String())
	}

	// A broken manifest: Load says to run init; init starts afresh.
	manifestFile := filepath.Join(root, ".mcpform", "modules", "modules.json")
	os.WriteFile(manifestFile, []byte("{not json"), 0o644)
	if _, diags := Load(root, Options{}); !strings.Contains(diags.Error(), "Invalid module manifest") {
		t.Errorf("broken manifest: %v", diags)
	}
	if _, _, diags := InstallModules(context.Background(), root, InstallOptions{}); diags.HasErrors() || len(diags) != 1 {
		t.Errorf("init over a broken manifest: %v", diags)
	}
	mustLoad(t, root, Options{})

	// A new tag: Load notices the source changed; init fetches it.
	v2 := repo.commit("v2.0.0", map[string]string{"github/ci/mcp.hcl": `server "runs2" { command = ["node", "runs2.js"] }`})
	source2 := strings.Replace(source, "v1.0.0", "v2.0.0", 1)
	writeTree(t, root, map[string]string{"mcp.hcl": "module \"github\" {\n  source = \"" + source2 + "\"\n  token_env = \"T\"\n}\n"})
	_, diags = Load(root, Options{})
	if diff := cmp.Diff([]string{"Module source has changed"}, errorsOf(diags)); diff != "" {
		t.Fatalf("after changing the ref (-want +got):\n%s", diff)
	}
	entries, _, diags = InstallModules(context.Background(), root, InstallOptions{})
	if diags.HasErrors() || len(entries) != 1 || entries[0].Commit != v2 {
		t.Fatalf("init v2: entries %+v, diags %v", entries, diags)
	}
	cfg = mustLoad(t, root, Options{})
	if cfg.Servers[0].Name != "github.ci.runs2" {
		t.Errorf("after init v2, first server = %s", cfg.Servers[0].Name)
	}

	// A ref that does not exist, and a subdirectory that does not.
	for _, bad := range []string{
		"git::" + repo.url() + "//github?ref=v9.9.9",
		"git::" + repo.url() + "//nope?ref=v1.0.0",
	} {
		dir := writeTree(t, t.TempDir(), map[string]string{"mcp.hcl": "module \"m\" {\n  source = \"" + bad + "\"\n}\n"})
		_, _, diags := InstallModules(context.Background(), dir, InstallOptions{})
		if diff := cmp.Diff([]string{"Cannot fetch module"}, errorsOf(diags)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", bad, diff)
		}
	}
}

// TestGitModuleNestedInGit: a git module that itself uses a git module, and
// a local module whose source leaves the fetched repository.
func TestGitModuleNestedInGit(t *testing.T) {
	inner := newGitRepo(t)
	inner.commit("v0.1.0", map[string]string{"mcp.hcl": `server "deep" { command = ["deep"] }`})
	outer := newGitRepo(t)
	outer.commit("v1.0.0", map[string]string{
		"mcp.hcl":        "module \"inner\" {\n  source = \"git::" + inner.url() + "?ref=v0.1.0\"\n}\n",
		"escape/mcp.hcl": "module \"up\" {\n  source = \"../../\"\n}\n",
	})
	root := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": "module \"outer\" {\n  source = \"git::" + outer.url() + "?ref=v1.0.0\"\n}\n",
	})
	entries, _, diags := InstallModules(context.Background(), root, InstallOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var keys []string
	for _, e := range entries {
		keys = append(keys, e.Key)
	}
	if diff := cmp.Diff([]string{"outer", "outer.inner"}, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	cfg := mustLoad(t, root, Options{})
	if len(cfg.Servers) != 1 || cfg.Servers[0].Name != "outer.inner.deep" || cfg.Servers[0].Addr != "module.outer.module.inner.server.deep" {
		t.Errorf("servers = %+v", cfg.Servers)
	}

	root2 := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": "module \"outer\" {\n  source = \"git::" + outer.url() + "//escape?ref=v1.0.0\"\n}\n",
	})
	_, _, diags = InstallModules(context.Background(), root2, InstallOptions{})
	if diff := cmp.Diff([]string{"Invalid module source"}, errorsOf(diags)); diff != "" {
		t.Errorf("escaping local source (-want +got):\n%s", diff)
	}
}
