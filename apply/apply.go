package apply

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/plan"
)

// errStale is returned when the lock changed after the plan was made.
var errStale = errors.New("the plan is stale")

// Result counts what an apply did.
type Result struct {
	Added, Changed, Removed int
	// Notes repeats the plan's notes (dropped taint labels and the like).
	Notes []string
}

// Options are what the command line sets of an apply.
type Options struct {
	// LockTimeout bounds the wait for the lock's advisory lock while
	// another writer holds it (0: one attempt; negative: no bound). When
	// it runs out the error wraps lock.ErrLocked and nothing is written.
	LockTimeout time.Duration
}

// ApplyWith writes the lock planned in p to p.LockPath, exactly as
// planned. It refuses a plan with errors, a plan without a planned lock,
// and a plan made against other lock bytes than the ones on disk now; the
// check and the write happen under the lock's advisory lock, so a
// concurrent apply cannot slip in between. On any error the lock is left
// byte-identical.
func ApplyWith(p *plan.Plan, o Options) (Result, error) {
	var res Result
	if errs := p.Errors(); len(errs) > 0 {
		return res, fmt.Errorf("the plan has errors; fix them and plan again:\n  %s", joinLines(errs))
	}
	if len(p.PlannedLock) == 0 {
		return res, errors.New("the plan holds no planned lock")
	}
	next, err := lock.Parse(p.PlannedLock)
	if err != nil {
		return res, fmt.Errorf("the planned lock does not verify: %w", err)
	}
	// Update writes lock.Marshal(next); for every lock mcpform writes that
	// is byte for byte the planned lock. Refuse rather than write anything
	// else.
	if again, err := lock.Marshal(next); err != nil || !bytes.Equal(again, p.PlannedLock) {
		return res, errors.New("the planned lock is not in mcpform's canonical form; run mcpform plan -out again")
	}
	err = lock.UpdateWait(p.LockPath, o.LockTimeout, func(current []byte) (*lock.File, error) {
		if got := plan.LockDigest(current); got != p.LockDigest {
			return nil, fmt.Errorf("%w: %s changed since the plan was made; run mcpform plan again", errStale, p.LockPath)
		}
		// The files beside the lock (an npm server's pinned tree) go
		// first: a lock is never written that names a file not there.
		if err := writeFiles(filepath.Dir(p.LockPath), p, next); err != nil {
			return nil, err
		}
		return next, nil
	})
	if err != nil {
		return res, err
	}
	for _, sp := range p.Servers {
		switch sp.Action {
		case plan.Create:
			res.Added++
		case plan.Update:
			res.Changed++
		case plan.Delete:
			res.Removed++
		}
	}
	res.Notes = p.Notes
	return res, nil
}

func joinLines(l []string) string {
	var b bytes.Buffer
	for i, s := range l {
		if i > 0 {
			b.WriteString("\n  ")
		}
		b.WriteString(s)
	}
	return b.String()
}

// writeFiles writes the plan's files beside the lock in lockDir, each
// atomically (a temporary file, then a rename). Each must lie under
// plan.NPMDir or plan.PyPIDir, and a lockfile or requirements file must be
// the one the planned lock names by digest for that path. A failure stops the apply before the lock is
// written; files written before it stay, and a lock that names one of them
// then refuses its start (the digest differs) until plan and apply again.
func writeFiles(lockDir string, p *plan.Plan, next *lock.File) error {
	named := map[string]string{} // lockfile path -> locked sha256
	for _, e := range next.Servers {
		if e.Mcpform != nil && e.Mcpform.NPM != nil {
			named[e.Mcpform.NPM.Lockfile.Path] = e.Mcpform.NPM.Lockfile.SHA256
		}
		if e.Mcpform != nil && e.Mcpform.PyPI != nil {
			named[e.Mcpform.PyPI.Requirements.Path] = e.Mcpform.PyPI.Requirements.SHA256
		}
	}
	for _, sp := range p.Servers {
		for _, f := range sp.Files {
			clean := path.Clean(f.Path)
			npmFile, pypiFile := strings.HasPrefix(clean, plan.NPMDir+"/"), strings.HasPrefix(clean, plan.PyPIDir+"/")
			if clean != f.Path || !(npmFile || pypiFile) || strings.Contains(clean, `\`) {
				return fmt.Errorf("the plan would write %q, which is not under %s or %s; run mcpform plan -out again", f.Path, plan.NPMDir, plan.PyPIDir)
			}
			if pypiFile && !strings.HasSuffix(clean, "/requirements.txt") {
				return fmt.Errorf("the plan would write %q, which is not a requirements file; run mcpform plan -out again", f.Path)
			}
			if (npmFile && strings.HasSuffix(clean, "/package-lock.json")) || pypiFile {
				sum := sha256.Sum256(f.Data)
				if want, ok := named[clean]; !ok || want != hex.EncodeToString(sum[:]) {
					return fmt.Errorf("the plan's %s is not the file its planned lock names; run mcpform plan -out again", clean)
				}
			}
			if err := writeAtomic(lockDir, clean, f.Data); err != nil {
				return fmt.Errorf("writing %s: %w", clean, err)
			}
		}
	}
	return nil
}

// writeAtomic writes data to rel (slash-separated, under lockDir) through
// a temporary file and a rename, inside an os.Root of lockDir: a symlink
// committed in the repository (.mcpform -> elsewhere) cannot send the
// write out of the lock's directory.
func writeAtomic(lockDir, rel string, data []byte) error {
	root, err := os.OpenRoot(lockDir)
	if err != nil {
		return err
	}
	defer root.Close()
	name := filepath.FromSlash(rel)
	if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return err
	}
	tmpName := filepath.Join(filepath.Dir(name), ".tmp-"+hex.EncodeToString(suffix[:]))
	tmp, err := root.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Chmod(tmpName, 0o644)
	}
	if werr == nil {
		werr = root.Rename(tmpName, name)
	}
	if werr != nil {
		root.Remove(tmpName)
	}
	return werr
}
