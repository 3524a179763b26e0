package main

import (
	"strings"

	"github.com/mcpform/mcpform/lock"
	lockrender "github.com/mcpform/mcpform/lock/render"
	"github.com/mcpform/mcpform/plan"
)

// addSampleFindings grades what the lock's sample calls gave the probe
// against the shapes the lock records (plan.SampleChanges, as plan grades
// them): a result whose shape moved under the same call is drift, listed
// as the tool's sample, with its findings under it.
func addSampleFindings(s *lockrender.VerifyServer, name string, locked *lock.Entry, samples []plan.SampleResult) {
	changes := plan.SampleChanges(plan.ServerAddr(name), locked, samples)
	if len(changes) == 0 {
		return
	}
	listed := map[string]bool{}
	for _, c := range changes {
		if c.Class == plan.Definitional && c.Grade > plan.None {
			s.Status = lockrender.Drift
		}
		tool := strings.TrimPrefix(c.Item, plan.ServerAddr(name)+".tool.")
		if !listed[tool] {
			listed[tool] = true
			s.Drift = append(s.Drift, lockrender.VerifyDrift{Class: lock.Definitional.String(), Action: "~", Field: "samples", Key: tool})
		}
	}
	addFindings(s, locked, changes...)
}
