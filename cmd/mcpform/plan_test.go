package main

import (
	"testing"
	"time"
)

// defaultConfigFlags is what plan and apply get without flags.
var defaultConfigFlags = configFlags{parallelism: 10, input: true, lock: true}

func TestParsePlanFlags(t *testing.T) {
	withTargets := defaultConfigFlags
	withTargets.targets = []string{"a", "module.m.server.b"}
	withTargets.parallelism = 2
	withTargets.noColor, withTargets.compactWarnings = true, true
	withTargets.varFlags = varFlags{vars: map[string]string{"v": "1"}, files: []string{"x.hcl"}}
	terraformCI := defaultConfigFlags
	terraformCI.input, terraformCI.lock, terraformCI.lockTimeout = false, false, 5*time.Minute
	testParse(t, parsePlanFlags, []parseCase[planFlags]{
		{args: nil, want: planFlags{configFlags: defaultConfigFlags}},
		{args: []string{"-out", "p.plan", "-sarif", "p.sarif", "-json", "-detailed-exitcode"},
			want: planFlags{configFlags: defaultConfigFlags, out: "p.plan", sarif: "p.sarif", json: true, detailedExitcode: true}},
		{args: []string{"-markdown"}, want: planFlags{configFlags: defaultConfigFlags, markdown: true}},
		{args: []string{"-target", "a", "-target=module.m.server.b", "-parallelism", "2", "-no-color", "-compact-warnings", "-var", "v=1", "-var-file", "x.hcl"},
			want: planFlags{configFlags: withTargets}},
		// terraform's flags that CI scripts pass: accepted, and do nothing.
		{args: []string{"-input=false", "-lock=false", "-lock-timeout=5m"}, want: planFlags{configFlags: terraformCI}},
		{args: []string{"extra"}, wantErr: true},
		{args: []string{"-json", "-markdown"}, wantErr: true},
		{args: []string{"-parallelism", "many"}, wantErr: true},
		{args: []string{"-nope"}, wantErr: true},
	})
}

func TestParseApplyFlags(t *testing.T) {
	waits := defaultConfigFlags
	waits.lockTimeout = 30 * time.Second
	noInput := defaultConfigFlags
	noInput.input = false
	testParse(t, parseApplyFlags, []parseCase[applyFlags]{
		{args: nil, want: applyFlags{configFlags: defaultConfigFlags}},
		{args: []string{"saved.plan"}, want: applyFlags{configFlags: defaultConfigFlags, planFile: "saved.plan"}},
		{args: []string{"-auto-approve", "-lock-timeout=30s"}, want: applyFlags{configFlags: waits, autoApprove: true}},
		{args: []string{"-input=false"}, want: applyFlags{configFlags: noInput}},
		{args: []string{"a", "b"}, wantErr: true},
		// mcp.lock's lock is never left behind: no -lock=false.
		{args: []string{"-lock=false"}, wantErr: true},
		{args: []string{"-lock-timeout=-1s"}, wantErr: true},
		{args: []string{"-nope"}, wantErr: true},
	})
}
