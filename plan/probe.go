package plan

import (
	"context"
	"encoding/json"
	"os/exec"
	"sync"
	"time"

	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/surface"
)

// Target is one server to probe, whether declared in mcp.hcl or locked.
type Target struct {
	Name    string
	Command []string
	Env     []string
	// Remote is a remote server's endpoint and auth, instead of Command
	// and Env.
	Remote *lock.Remote
	// OAuth gives an OAuth server's tokens (Options.OAuth); nil without.
	OAuth mcp.OAuthHandler
	// OnReject hears of each tool the probe left out (mcp.ServerSpec).
	OnReject           func(tool string, why error)
	Dir                string // the server's working directory: the lock's (and mcp.hcl's) directory
	Era                mcp.Era
	ClientCapabilities json.RawMessage
	Timeout            time.Duration
	// Locked is the existing entry, when there is one: the probe asks the
	// server in the entry's own era first, so a server that speaks both
	// keeps the era it was locked in (docs/LOCKFILE.md, "Versions").
	Locked *lock.Entry
	// Prepare, when set, rewrites the server's command before it starts
	// (the sandbox, for a server with a sandbox policy).
	Prepare func(cmd *exec.Cmd) (cleanup func(), err error)
	// LookupEnv supplies the values of the names in Env.
	LookupEnv func(string) (string, bool)
	// OnPhase, when set, hears of each phase of the probe as it enters it
	// (mcp.ServerSpec.OnPhase), on the probing goroutine. A second probe
	// (the era fallback of a locked server) reports its phases again.
	OnPhase func(mcp.Phase)
	// Samples are the sample calls the probe makes after the lists, each
	// only if its tool is marked read-only live and in SampleLock (or it
	// allows side effects); Result.Samples says what became of each.
	Samples []SampleCall
	// SampleLock is the locked entry whose tool annotations gate the
	// samples too; nil for a server the lock does not hold.
	SampleLock *lock.Entry
}

// TargetFromEntry is the Target that probes a locked entry exactly as it was
// locked: its argv, env names, client capabilities, timeout and era.
func TargetFromEntry(name string, e *lock.Entry, dir string) Target {
	t := Target{Name: name, Command: e.Command, Env: e.EnvPassthrough, Remote: e.Remote, Dir: dir, Locked: e, Era: mcp.EraAuto}
	if s := e.Mcpform; s != nil {
		t.ClientCapabilities = s.ClientCapabilities
		if d, err := time.ParseDuration(s.Timeout); err == nil {
			t.Timeout = d
		}
		if s.Protocol != "" {
			t.Era, _ = mcp.ParseEra(s.Protocol)
		}
	}
	t.Samples, t.SampleLock = lockedSamples(e), e
	return t
}

// Probe asks the server for its live surface and returns it as a sealed
// lock entry (settings and policy are left to the caller).
//
// With a locked entry and no forced era, the server is asked in its locked
// era first; only if that fails is it asked again with era detection, and a
// surface in the other era is returned (Compare reports it as era drift). A
// server that speaks both eras thus keeps the era it was locked in.
func Probe(ctx context.Context, t Target) (*lock.Entry, error) {
	e, _, err := probeSampled(ctx, t)
	return e, err
}

// probeSampled is Probe with what became of the target's samples.
func probeSampled(ctx context.Context, t Target) (*lock.Entry, []SampleResult, error) {
	era := t.Era
	if era == mcp.EraAuto && t.Locked != nil {
		era = mcp.EraLegacy
		if t.Locked.Modern() {
			era = mcp.EraModern
		}
		s, sm, err := probe(ctx, t, era)
		if err == nil {
			return sampledEntry(s, sm)
		}
		if ctx.Err() != nil {
			return nil, nil, err
		}
		auto, sm, autoErr := probe(ctx, t, mcp.EraAuto)
		if autoErr != nil || auto.Era == era {
			// The server does not answer in another era either: the
			// failure in its own era is the one to report.
			return nil, nil, err
		}
		return sampledEntry(auto, sm)
	}
	s, sm, err := probe(ctx, t, era)
	if err != nil {
		return nil, nil, err
	}
	return sampledEntry(s, sm)
}

// sampledEntry is the live entry of s and its samples' results.
func sampledEntry(s *mcp.Surface, sm *sampler) (*lock.Entry, []SampleResult, error) {
	e, err := surface.Entry(s)
	if err != nil {
		return nil, nil, err
	}
	var results []SampleResult
	if sm != nil {
		results = sm.finish(s)
	}
	return e, results, nil
}

func probe(ctx context.Context, t Target, era mcp.Era) (*mcp.Surface, *sampler, error) {
	var url, bearer string
	var headers map[string]string
	if r := t.Remote; r != nil {
		url, headers = r.URL, r.Headers
		if r.Auth != nil {
			bearer = r.Auth.BearerEnv
		}
	}
	var sm *sampler
	var calls func(*mcp.Surface) []mcp.ToolCall
	if len(t.Samples) > 0 {
		sm = &sampler{samples: t.Samples, locked: t.SampleLock}
		calls = sm.calls
	}
	s, err := mcp.Probe(ctx, mcp.ServerSpec{
		URL:                url,
		Headers:            headers,
		BearerEnv:          bearer,
		OAuth:              t.OAuth,
		OnReject:           t.OnReject,
		Name:               t.Name,
		Command:            t.Command,
		Env:                t.Env,
		LookupEnv:          t.LookupEnv,
		Dir:                t.Dir,
		Era:                era,
		ClientCapabilities: t.ClientCapabilities,
		Timeout:            t.Timeout,
		Prepare:            t.Prepare,
		OnPhase:            t.OnPhase,
		Calls:              calls,
	})
	return s, sm, err
}

// Result is the outcome of probing one Target.
type Result struct {
	Name  string
	Entry *lock.Entry // nil when Err is set
	// Samples are what became of Target.Samples, in their order.
	Samples  []SampleResult
	Err      error
	Duration time.Duration
}

// Progress hears about each probe as it starts and ends; ProbeAll calls it
// from several goroutines, one call at a time. The phases in between are
// each Target's OnPhase.
type Progress func(name string, done bool, r *Result)

// ProbeAll probes independent servers in parallel, at most parallelism at
// once (default 10), and returns the results in the order of targets.
func ProbeAll(ctx context.Context, targets []Target, parallelism int, progress Progress) []Result {
	if parallelism <= 0 {
		parallelism = 10
	}
	results := make([]Result, len(targets))
	sem := make(chan struct{}, parallelism)
	var mu sync.Mutex
	report := func(name string, done bool, r *Result) {
		if progress != nil {
			mu.Lock()
			progress(name, done, r)
			mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			report(t.Name, false, nil)
			start := time.Now()
			e, samples, err := probeSampled(ctx, t)
			results[i] = Result{Name: t.Name, Entry: e, Samples: samples, Err: err, Duration: time.Since(start)}
			report(t.Name, true, &results[i])
		}()
	}
	wg.Wait()
	return results
}
