package pins

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
)

// Compute returns the pins of a command server: command[0] resolved from
// dir (the server's working directory) as mcp.Start resolves it, and the
// script when command[0] is an interpreter and its script argument is an
// existing file. Recorded paths are relative to lockDir when the file is
// inside it. An executable that cannot be found is an error wrapping
// fs.ErrNotExist or exec.ErrNotFound.
func Compute(command []string, dir, lockDir string) (*lock.Pins, error) {
	if len(command) == 0 || command[0] == "" {
		return nil, errors.New("no command to pin")
	}
	exe, err := Resolve(command[0], dir)
	if err != nil {
		return nil, fmt.Errorf("pinning %s: %w", escape.String(command[0]), err)
	}
	p := &lock.Pins{}
	if p.Executable, err = pinFile(exe, lockDir, nil); err != nil {
		return nil, err
	}
	if sp, ok := scriptPath(command, dir); ok {
		// A module name, a directory or a flag's value: not a script
		// file, so nothing to pin.
		if real, err := realFile(sp); err == nil {
			if p.Script, err = pinFile(real, lockDir, nil); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// pinFile hashes the real file p and names it relative to lockDir when it
// is inside it.
func pinFile(p, lockDir string, c *Cache) (*lock.FilePin, error) {
	sum, err := c.sum(p)
	if err != nil {
		return nil, err
	}
	return &lock.FilePin{Path: displayPath(p, lockDir), SHA256: sum}, nil
}

// displayPath is p relative to lockDir (slash-separated) when inside it,
// else p. lockDir's own symlinks are followed, as p's were.
func displayPath(p, lockDir string) string {
	if lockDir == "" {
		return p
	}
	if real, err := filepath.EvalSymlinks(lockDir); err == nil {
		lockDir = real
	}
	if abs, err := filepath.Abs(lockDir); err == nil {
		lockDir = abs
	}
	rel, err := filepath.Rel(lockDir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return p
	}
	return filepath.ToSlash(rel)
}

// hashFile is the lowercase hex SHA-256 of the open file f.
func hashFile(f *os.File) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Mismatch is a pinned file that is not what the lock pins: changed,
// missing, or another file now that a symlink or PATH points elsewhere.
type Mismatch struct {
	// What is "executable" or "script".
	What string
	// Locked is the pin; Found the real file the command resolves to now
	// ("" when there is none) and its digest ("" when it could not be
	// read). Err is why, when the file could not be found or read.
	Locked        lock.FilePin
	Found, SHA256 string
	Err           error
}

// Rule is the plan rule a plan made now would report the change under.
func (m *Mismatch) Rule() string {
	return "PKG-" + strings.ToUpper(m.What) + "-CHANGED"
}

func (m *Mismatch) Error() string {
	locked := fmt.Sprintf("%s (sha256 %s…)", escape.String(m.Locked.Path), m.Locked.SHA256[:min(12, len(m.Locked.SHA256))])
	var what string
	switch {
	case m.Found == "":
		what = fmt.Sprintf("the locked %s %s is missing: %v", m.What, locked, m.Err)
	case m.Err != nil:
		what = fmt.Sprintf("the locked %s %s could not be read at %s: %v", m.What, locked, escape.String(m.Found), m.Err)
	default:
		what = fmt.Sprintf("the %s changed since it was locked: locked %s, found %s (sha256 %s…)", m.What, locked, escape.String(m.Found), m.SHA256[:12])
	}
	return what + "; nothing was started. Review the change with mcpform plan (" + m.Rule() + ") and lock it with mcpform apply, or restore the locked file"
}

func (m *Mismatch) Unwrap() error { return m.Err }

// Check resolves command from dir as Compute did and compares what it
// finds with p. The first difference is a *Mismatch; nil p checks nothing
// (an entry locked before pins existed). c, when not nil, spares hashing
// files unchanged since they were last hashed.
func Check(p *lock.Pins, command []string, dir string, c *Cache) error {
	if p == nil {
		return nil
	}
	if p.Executable != nil {
		mismatchOf := func(found string, err error) error {
			return &Mismatch{What: "executable", Locked: *p.Executable, Found: found, Err: err}
		}
		if len(command) == 0 {
			return mismatchOf("", errors.New("the entry has no command"))
		}
		exe, err := Resolve(command[0], dir)
		if err != nil {
			return mismatchOf("", err)
		}
		if err := checkFile(*p.Executable, exe, c, mismatchOf); err != nil {
			return err
		}
	}
	if p.Script != nil {
		mismatchOf := func(found string, err error) error {
			return &Mismatch{What: "script", Locked: *p.Script, Found: found, Err: err}
		}
		sp, ok := scriptPath(command, dir)
		if !ok {
			return mismatchOf("", errors.New("the command names no script"))
		}
		real, err := realFile(sp)
		if err != nil {
			return mismatchOf("", err)
		}
		if err := checkFile(*p.Script, real, c, mismatchOf); err != nil {
			return err
		}
	}
	return nil
}

func checkFile(pin lock.FilePin, real string, c *Cache, mismatchOf func(string, error) error) error {
	sum, err := c.sum(real)
	if err != nil {
		return mismatchOf(real, err)
	}
	if sum != pin.SHA256 {
		m := mismatchOf(real, nil).(*Mismatch)
		m.SHA256 = sum
		return m
	}
	return nil
}

// errNotRegular is a pinned path that is no longer a regular file.
var errNotRegular = fmt.Errorf("not a regular file: %w", fs.ErrInvalid)
