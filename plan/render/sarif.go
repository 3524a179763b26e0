package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/plan"
)

// SARIF writes the plan as a SARIF 2.1.0 log for code scanning (GitHub,
// GitLab): one result per definitional or code change (a surface that
// changed, a pinned file that is another), with the change's rule id,
// a level from its grade (major → error, minor → warning, patch and none →
// note) and, as its location, the lock the plan was made against. Use
// SARIFWithOptions to point results at the server blocks in mcp.hcl.
//
// Informational and configuration changes are not results: they do not
// change what an agent can do (a changed binary can, behind the same tools). Servers that could not be probed and failed
// version gates are not results either; plan's exit status reports them.
func SARIF(w io.Writer, p *plan.Plan) error {
	return SARIFWithOptions(w, p, SARIFOptions{})
}

// SARIFOptions add what the plan does not hold.
type SARIFOptions struct {
	// ToolVersion is mcpform's version, for tool.driver.version.
	ToolVersion string
	// Locations maps a server's lock name to where it is declared, so that
	// a result points at its server block. Servers without one point at
	// the plan's lock file.
	Locations map[string]SARIFLocation
}

// SARIFLocation is a place in a file of the repository. File is relative to
// the repository root (code scanning resolves it there), slash- or
// OS-separated; Line is 1-based, 0 when unknown.
type SARIFLocation struct {
	File string
	Line int
}

// sarifSchema is the URI of the schema the log declares.
const sarifSchema = "https://json.schemastore.org/sarif-2.1.0.json"

// SARIFWithOptions is SARIF with locations and a tool version.
func SARIFWithOptions(w io.Writer, p *plan.Plan, o SARIFOptions) error {
	rules, index := sarifRules()
	results := []sarifResult{}
	for _, s := range p.Servers {
		loc, ok := o.Locations[s.Name]
		if !ok {
			loc = SARIFLocation{File: p.LockPath}
		}
		for _, c := range s.Changes {
			if c.Class != plan.Definitional && c.Class != plan.Code {
				continue
			}
			i, ok := index[c.Rule]
			if !ok {
				// A rule the catalogue does not hold still gets a
				// descriptor: ruleIndex must point at one.
				i = len(rules)
				index[c.Rule] = i
				rules = append(rules, sarifRule{ID: c.Rule, ShortDescription: sarifText{Text: c.Rule}})
			}
			results = append(results, sarifResultFor(s, c, i, loc))
		}
	}
	log := sarifLog{
		Schema:  sarifSchema,
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool: sarifTool{Driver: sarifDriver{
				Name:           "mcpform",
				Version:        o.ToolVersion,
				InformationURI: "https://github.com/mcpform/mcpform",
				Rules:          rules,
			}},
			Results: results,
			Properties: map[string]any{
				"required_bump": p.RequiredBump.String(),
				"lock_digest":   p.LockDigest,
			},
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(log)
}

// sarifLevel maps a grade to a SARIF level.
func sarifLevel(g plan.Grade) string {
	switch g {
	case plan.Major:
		return "error"
	case plan.Minor:
		return "warning"
	}
	return "note"
}

func sarifRules() ([]sarifRule, map[string]int) {
	var rules []sarifRule
	index := map[string]int{}
	for _, r := range plan.Rules() {
		d := sarifRule{
			ID:               r.ID,
			ShortDescription: sarifText{Text: r.Summary},
			Help:             &sarifText{Text: fmt.Sprintf("%s\n\nExample: %s\n\nRun `mcpform explain %s` for more.", r.Detail, r.Example, r.ID)},
			DefaultConfiguration: &sarifConfig{
				Level: sarifLevel(r.Grade),
			},
			Properties: map[string]any{"grade": r.Grade.String()},
		}
		if r.Detail != "" {
			d.FullDescription = &sarifText{Text: r.Detail}
		}
		tags := []string{"mcp"}
		if r.Class != "" {
			tags = append(tags, string(r.Class))
		}
		if r.Security {
			// GitHub ranks security alerts by security-severity (a
			// CVSS-like score as a string) on the rule.
			tags = append(tags, "security")
			d.Properties["security-severity"] = map[plan.Grade]string{plan.Major: "8.0", plan.Minor: "5.0"}[r.Grade]
			if d.Properties["security-severity"] == "" {
				d.Properties["security-severity"] = "2.0"
			}
		}
		d.Properties["tags"] = tags
		index[r.ID] = len(rules)
		rules = append(rules, d)
	}
	return rules, index
}

func sarifResultFor(s *plan.ServerPlan, c plan.Change, rule int, loc SARIFLocation) sarifResult {
	addr := escape.String(c.Addr)
	text := fmt.Sprintf("%s (%s): %s", addr, c.Action, ruleSummary(c.Rule))
	if c.Detail != "" {
		text += " " + escape.String(c.Detail)
	}
	text += fmt.Sprintf(" (%s change", c.Grade)
	if c.Security {
		text += ", security-relevant: read it with an attacker in mind"
	}
	text += "). Review it with `mcpform plan`; `mcpform explain " + c.Rule + "` says what it means."
	text += sarifJudgement(c)
	phys := sarifPhysical{ArtifactLocation: sarifArtifact{URI: sarifURI(loc.File)}}
	if loc.Line > 0 {
		phys.Region = &sarifRegion{StartLine: loc.Line}
	}
	sum := sha256.Sum256([]byte(c.Addr + "\x00" + c.Rule + "\x00" + string(c.Action) + "\x00" + string(c.Before) + "\x00" + string(c.After)))
	r := sarifResult{
		RuleID:    c.Rule,
		RuleIndex: rule,
		Level:     sarifLevel(c.Grade),
		Message:   sarifText{Text: text},
		Locations: []sarifLocation{{
			PhysicalLocation: phys,
			LogicalLocations: []sarifLogical{{FullyQualifiedName: addr, Kind: "member"}},
		}},
		// Code scanning matches alerts across runs by fingerprint; every
		// result of a server shares one location, so the change itself
		// must tell them apart.
		PartialFingerprints: map[string]string{"mcpformChange/v1": hex.EncodeToString(sum[:16])},
		Properties: map[string]any{
			"server":            s.Name,
			"address":           addr,
			"action":            c.Action.String(),
			"grade":             c.Grade.String(),
			"security_relevant": c.Security,
		},
	}
	if c.Judgement != nil {
		r.Properties["judgement"] = c.Judgement.Outcome
	}
	return r
}

func ruleSummary(id string) string {
	if r, ok := plan.LookupRule(id); ok {
		return strings.TrimSuffix(r.Summary, ".") + "."
	}
	return id
}

// sarifURI writes a file path as a URI reference: relative paths stay
// relative (code scanning resolves them against the repository root),
// absolute ones become file:// URIs.
func sarifURI(path string) string {
	if path == "" {
		return "mcp.lock"
	}
	slash := filepath.ToSlash(path)
	if filepath.IsAbs(path) {
		return (&url.URL{Scheme: "file", Path: slash}).String()
	}
	return (&url.URL{Path: strings.TrimPrefix(slash, "./")}).String()
}

// The SARIF 2.1.0 objects mcpform writes, a small subset of the format.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool       sarifTool      `json:"tool"`
		Results    []sarifResult  `json:"results"`
		Properties map[string]any `json:"properties,omitempty"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		Version        string      `json:"version,omitempty"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string         `json:"id"`
		ShortDescription     sarifText      `json:"shortDescription"`
		FullDescription      *sarifText     `json:"fullDescription,omitempty"`
		Help                 *sarifText     `json:"help,omitempty"`
		DefaultConfiguration *sarifConfig   `json:"defaultConfiguration,omitempty"`
		Properties           map[string]any `json:"properties,omitempty"`
	}
	sarifConfig struct {
		Level string `json:"level"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID              string            `json:"ruleId"`
		RuleIndex           int               `json:"ruleIndex"`
		Level               string            `json:"level"`
		Message             sarifText         `json:"message"`
		Locations           []sarifLocation   `json:"locations"`
		PartialFingerprints map[string]string `json:"partialFingerprints"`
		Properties          map[string]any    `json:"properties"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical  `json:"physicalLocation"`
		LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           *sarifRegion  `json:"region,omitempty"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine int `json:"startLine"`
	}
	sarifLogical struct {
		FullyQualifiedName string `json:"fullyQualifiedName"`
		Kind               string `json:"kind"`
	}
)
