package render

import (
	"encoding/json"
	"io"

	"github.com/mcpform/mcpform/plan"
)

// JSON writes the plan in the versioned machine format documented in
// JSON.md. Strings are as the server sent them (JSON escapes controls but
// not bidi or zero-width characters): a consumer that shows them to a person
// must escape them as Human does.
func JSON(w io.Writer, p *plan.Plan) error {
	sum := summarize(p)
	out := jsonPlan{
		FormatVersion: plan.FormatVersion,
		ConfigDigest:  p.ConfigDigest,
		LockDigest:    p.LockDigest,
		LockPath:      p.LockPath,
		HasChanges:    p.HasChanges(),
		Servers:       []jsonServer{},
		Summary: jsonSummary{Add: sum.Add, Change: sum.Change, Remove: sum.Remove,
			Definitional: sum.Definitional, Informational: sum.Informational, Config: sum.Config, Code: sum.Code, SecurityRelevant: sum.Security},
		RequiredBump: sum.RequiredBump.String(),
		Errors:       nonNil(p.Errors()),
		Notes:        nonNil(p.Notes),
	}
	for _, s := range p.Servers {
		js := jsonServer{Name: s.Name, Address: s.Addr, Action: s.Action.String(), RequiredBump: s.RequiredBump.String(),
			Version: s.Version, LockedVersion: s.LockedVersion, SuggestedVersion: s.SuggestedVersion, Unchanged: s.Unchanged, Changes: []jsonChange{},
			Error: s.Error, VersionError: s.VersionError}
		if js.Unchanged == nil {
			js.Unchanged = map[string]int{}
		}
		for _, c := range s.Changes {
			js.Changes = append(js.Changes, jsonChange{Address: c.Addr, Item: c.Item, Action: c.Action.String(),
				Class: string(c.Class), Grade: c.Grade.String(), Rule: c.Rule, SecurityRelevant: c.Security,
				Before: c.Before, After: c.After, Detail: c.Detail, Judgement: c.Judgement})
		}
		out.Servers = append(out.Servers, js)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// The format's types; JSON.md documents every field. Field order here is
// the order in the output.
type jsonPlan struct {
	FormatVersion string       `json:"format_version"`
	ConfigDigest  string       `json:"config_digest"`
	LockDigest    string       `json:"lock_digest"`
	LockPath      string       `json:"lock_path"`
	HasChanges    bool         `json:"has_changes"`
	Servers       []jsonServer `json:"servers"`
	Summary       jsonSummary  `json:"summary"`
	RequiredBump  string       `json:"required_bump"`
	Errors        []string     `json:"errors"`
	Notes         []string     `json:"notes"`
}

type jsonServer struct {
	Name          string `json:"name"`
	Address       string `json:"address"`
	Action        string `json:"action"`
	RequiredBump  string `json:"required_bump"`
	Version       string `json:"version,omitempty"`
	LockedVersion string `json:"locked_version,omitempty"`
	// SuggestedVersion is plan.ServerPlan's semver advice.
	SuggestedVersion string         `json:"suggested_version,omitempty"`
	Unchanged        map[string]int `json:"unchanged"`
	Changes          []jsonChange   `json:"changes"`
	Error            string         `json:"error,omitempty"`
	VersionError     string         `json:"version_error,omitempty"`
}

type jsonChange struct {
	Address          string          `json:"address"`
	Item             string          `json:"item,omitempty"`
	Action           string          `json:"action"`
	Class            string          `json:"class"`
	Grade            string          `json:"grade"`
	Rule             string          `json:"rule"`
	SecurityRelevant bool            `json:"security_relevant"`
	Before           json.RawMessage `json:"before"`
	After            json.RawMessage `json:"after"`
	Detail           string          `json:"detail,omitempty"`
	// Judgement is the judges' verdicts on a changed text (JSON.md).
	Judgement *plan.Judgement `json:"judgement,omitempty"`
}

type jsonSummary struct {
	Add              int `json:"add"`
	Change           int `json:"change"`
	Remove           int `json:"remove"`
	Definitional     int `json:"definitional"`
	Informational    int `json:"informational"`
	Config           int `json:"config"`
	Code             int `json:"code"`
	SecurityRelevant int `json:"security_relevant"`
}
