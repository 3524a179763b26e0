package render

import (
	"fmt"

	"github.com/mcpform/mcpform/plan"
)

// summary is the plan's counts, shared by every format so that they agree.
type summary struct {
	// Add, Change and Remove count what the lock gains, changes and loses:
	// each item (tool, prompt, resource, template) once, and each
	// server-level change (instructions, era, an informational field, a
	// config change) once.
	Add, Change, Remove int
	// Definitional, Informational, Config and Code count the findings by
	// class; Security counts the security-relevant ones.
	Definitional, Informational, Config, Code, Security int
	RequiredBump                                        plan.Grade
	// Servers counts the plan's servers, Failed those with an error (not
	// probed, or a failed gate): a plan with any is incomplete, and every
	// format says so instead of closing with its totals alone.
	Servers, Failed int
}

func summarize(p *plan.Plan) summary {
	var s summary
	s.RequiredBump = p.RequiredBump
	count := func(a plan.Action) {
		switch a {
		case plan.Create:
			s.Add++
		case plan.Update:
			s.Change++
		case plan.Delete:
			s.Remove++
		}
	}
	s.Servers = len(p.Servers)
	for _, sp := range p.Servers {
		if sp.Error != "" || sp.VersionError != "" {
			s.Failed++
		}
		s.RequiredBump = max(s.RequiredBump, sp.RequiredBump)
		for _, g := range group(sp) {
			if g.item == "" {
				for _, c := range g.changes {
					count(c.Action)
				}
				continue
			}
			a := plan.Update
			for _, c := range g.changes {
				if c.Addr == g.item {
					a = c.Action
				}
			}
			count(a)
		}
		for _, c := range sp.Changes {
			switch c.Class {
			case plan.Definitional:
				s.Definitional++
				// Config and informational changes never raise the bump.
				s.RequiredBump = max(s.RequiredBump, c.Grade)
			case plan.Informational:
				s.Informational++
			case plan.Config:
				s.Config++
			case plan.Code:
				// A changed file behind the same surface: graded, and
				// never a surface bump.
				s.Code++
			}
			if c.Security {
				s.Security++
			}
		}
	}
	return s
}

// codeCount is the summary's count of code changes (pinned files), ", code:
// N", shown only in a plan that has some, so that plans of servers without
// pins read as they always did.
func codeCount(s summary) string {
	if s.Code == 0 {
		return ""
	}
	return fmt.Sprintf(", code: %d", s.Code)
}
