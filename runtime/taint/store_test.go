package taint

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for a second run process (the
// test binary re-executed, so no helper has to be built): with
// MCPFORM_TAINT_WRITER=DIR,SESSION,N it taints SESSION N times and exits.
func TestMain(m *testing.M) {
	if spec := os.Getenv("MCPFORM_TAINT_WRITER"); spec != "" {
		parts := strings.Split(spec, ",")
		n, _ := strconv.Atoi(parts[2])
		s, err := Open(parts[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for i := range n {
			if err := s.Taint(parts[1], Event{Server: "proc", Source: "fetch", Item: strconv.Itoa(i), Digest: "sha256:x"}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestStoreTaintGetReset(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "taint")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", fi.Mode().Perm())
	}
	st, err := s.Get("u1-ppid-2-3")
	if err != nil || st.Tainted() {
		t.Fatalf("fresh session: %v %v", st, err)
	}
	if err := s.Taint("u1-ppid-2-3", Event{Server: "web", Source: "fetch", Item: "fetch", Digest: "sha256:ab"}); err != nil {
		t.Fatal(err)
	}
	st, err = s.Get("u1-ppid-2-3")
	if err != nil || !st.Tainted() || st.Events[0].Server != "web" || st.Events[0].PID != os.Getpid() {
		t.Fatalf("after taint: %+v %v", st, err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "u1-ppid-2-3.json")); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	if other, _ := s.Get("u1-ppid-2-4"); other.Tainted() {
		t.Error("another client process shares the taint")
	}
	if err := s.Reset("u1-ppid-2-3"); err != nil {
		t.Fatal(err)
	}
	if err := s.Reset("u1-ppid-2-3"); err == nil {
		t.Error("resetting an unknown session succeeded")
	}
	for _, bad := range []string{"", "../x", ".lock", "a/b", "-all", strings.Repeat("a", 200)} {
		if _, err := s.Get(bad); err == nil {
			t.Errorf("session name %q accepted", bad)
		}
	}
}

func TestStoreRefusesDamagedFile(t *testing.T) {
	s, _ := Open(t.TempDir())
	os.WriteFile(filepath.Join(s.dir, "u1-p.json"), []byte("{"), 0o600)
	if _, err := s.Get("u1-p"); err == nil {
		t.Fatal("a damaged file read as a clean session")
	}
}

func TestStoreBoundsEvents(t *testing.T) {
	s, _ := Open(t.TempDir())
	for i := range maxEvents + 10 {
		if err := s.Taint("s", Event{Item: strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := s.Get("s")
	if len(st.Events) != maxEvents || st.Dropped != 10 || st.Events[0].Item != "0" || st.Events[maxEvents-1].Item != strconv.Itoa(maxEvents+9) {
		t.Fatalf("events %d dropped %d first %q", len(st.Events), st.Dropped, st.Events[0].Item)
	}
}

// TestStoreConcurrentTaint has goroutines and processes taint one session
// while others read it: no event is lost, no reader sees half a file.
func TestStoreConcurrentTaint(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	const procs, perProc, goroutines, perG = 3, 10, 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("MCPFORM_TAINT_WRITER=%s,sess,%d", dir, perProc))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("writer process: %v: %s", err, out)
			}
		}()
	}
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perG {
				if err := s.Taint("sess", Event{Server: "g", Item: fmt.Sprint(g, i)}); err != nil {
					errs <- err
				}
			}
		}()
	}
	stop := make(chan struct{})
	var reads atomic.Int64
	var rwg sync.WaitGroup
	for range 4 {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.Get("sess"); err != nil {
					errs <- fmt.Errorf("reader: %w", err)
					return
				}
				if _, err := s.List(); err != nil {
					errs <- fmt.Errorf("list: %w", err)
					return
				}
				reads.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stop)
	rwg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st, err := s.Get("sess")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(st.Events)+st.Dropped, procs*perProc+goroutines*perG; got != want {
		t.Errorf("%d events recorded, want %d", got, want)
	}
	if reads.Load() == 0 {
		t.Error("no read completed")
	}
}

func TestStoreRedeemOnce(t *testing.T) {
	s, _ := Open(t.TempDir())
	exp := time.Now().Add(time.Minute)
	var ok atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Redeem("s", "nonce", exp)
			switch {
			case err == nil:
				ok.Add(1)
			case !errors.Is(err, errReplayed):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 {
		t.Fatalf("nonce redeemed %d times, want once", ok.Load())
	}
}

func TestStoreRefusesSharedDir(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	if _, err := Open(dir); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("open left the directory %v", fi.Mode().Perm())
	}
}

func TestRequestState(t *testing.T) {
	key := make([]byte, 32)
	now := time.Now()
	c, err := NewClaims("s", "srv", "send", "sha256:a", now, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Seal(key, c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unseal(key, st)
	if err != nil || got != c {
		t.Fatalf("unseal: %+v %v", got, err)
	}
	if err := got.Check("s", "srv", "send", "sha256:a", now); err != nil {
		t.Fatal(err)
	}
	for name, check := range map[string]func() error{
		"session": func() error { return got.Check("t", "srv", "send", "sha256:a", now) },
		"tool":    func() error { return got.Check("s", "srv", "other", "sha256:a", now) },
		"args":    func() error { return got.Check("s", "srv", "send", "sha256:b", now) },
		"expiry":  func() error { return got.Check("s", "srv", "send", "sha256:a", now.Add(2*time.Minute)) },
	} {
		if check() == nil {
			t.Errorf("%s mismatch accepted", name)
		}
	}
	other := make([]byte, 32)
	other[0] = 1
	body, _, _ := strings.Cut(strings.TrimPrefix(st, StatePrefix), ".")
	for _, forged := range []string{
		"", "garbage", st + "x", StatePrefix + body + ".", StatePrefix + body,
		strings.Replace(st, StatePrefix+body[:4], StatePrefix+"AAAA", 1),
	} {
		if _, err := Unseal(key, forged); !errors.Is(err, errForged) {
			t.Errorf("forged %q: %v", forged, err)
		}
	}
	if _, err := Unseal(other, st); !errors.Is(err, errForged) {
		t.Errorf("another key verified the state: %v", err)
	}
}

func FuzzUnseal(f *testing.F) {
	key := make([]byte, 32)
	c, _ := NewClaims("s", "srv", "t", "a", time.Now(), time.Minute)
	st, _ := Seal(key, c)
	f.Add(st)
	f.Add(StatePrefix + "e30.")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Unseal(key, s)
		if err == nil {
			// Only something sealed with key verifies.
			again, _ := Seal(key, c)
			if _, err := Unseal(key, again); err != nil {
				t.Fatal(err)
			}
		}
	})
}
