package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
)

// Entries prints the entries of lf named by names, in that order, with a
// blank line between two: `mcpform show`.
func Entries(w io.Writer, lf *lock.File, names []string) {
	for i, n := range names {
		if i > 0 {
			fmt.Fprintln(w)
		}
		Entry(w, n, lf.Servers[n])
	}
}

// Entry prints one entry. Everything the server wrote is escaped.
func Entry(w io.Writer, name string, e *lock.Entry) {
	var info struct{ Name, Version string }
	json.Unmarshal(e.ServerInfo, &info)
	era := "legacy (initialize)"
	if e.Modern() {
		era = "2026-07-28 (server/discover); supports " + strings.Join(e.SupportedVersions, ", ")
	}
	fmt.Fprintf(w, "server %q\n", name)
	if r := e.Remote; r != nil {
		fmt.Fprintf(w, "  url          %s (%s)\n", escape.String(r.URL), r.Transport)
		switch {
		case r.Auth != nil && r.Auth.OAuth:
			scopes := "the server's default scopes"
			if len(r.Auth.Scopes) > 0 {
				scopes = "scopes " + escape.String(strings.Join(r.Auth.Scopes, " "))
			}
			fmt.Fprintf(w, "  auth         oauth, %s\n", scopes)
			if len(r.Auth.Issuers) > 0 {
				quoted := make([]string, len(r.Auth.Issuers))
				for i, is := range r.Auth.Issuers {
					quoted[i] = escape.String(is)
				}
				fmt.Fprintf(w, "  issuers      %s (resource %s)\n", strings.Join(quoted, ", "), escape.String(r.Auth.Resource))
			}
		case r.Auth != nil:
			fmt.Fprintf(w, "  auth         bearer token from %s\n", r.Auth.BearerEnv)
		}
	} else {
		fmt.Fprintf(w, "  command      %s\n", Command(e.Command))
	}
	if len(e.EnvPassthrough) > 0 {
		fmt.Fprintf(w, "  env          %s\n", strings.Join(e.EnvPassthrough, ", "))
	}
	fmt.Fprintf(w, "  server       %s %s\n", escape.String(info.Name), escape.String(info.Version))
	fmt.Fprintf(w, "  protocol     %s, era %s\n", escape.String(e.ProtocolVersion), escape.String(era))
	fmt.Fprintf(w, "  surface      %s\n", e.Digests.Surface)
	if e.Mcpform != nil && e.Mcpform.Version != "" {
		fmt.Fprintf(w, "  version      %s\n", e.Mcpform.Version)
	}
	if e.Instructions != nil {
		fmt.Fprintf(w, "  instructions %s\n", escape.String(firstLine(*e.Instructions, 100)))
	}
	for _, k := range lock.Kinds {
		list := e.List(k)
		if len(list) == 0 {
			continue
		}
		fmt.Fprintf(w, "  %s (%d)\n", k.Field(), len(list))
		for _, it := range list {
			fmt.Fprintln(w, itemLine(it))
		}
	}
	if p := e.Policy; p != nil {
		if p.Taint != nil {
			fmt.Fprintf(w, "  taint        sources %s; sinks %s\n", listOrNone(p.Taint.Sources), listOrNone(p.Taint.Sinks))
		}
		if sb := p.Sandbox; sb != nil {
			fmt.Fprintf(w, "  sandbox      read %s; write %s; network %s\n", listOrNone(sb.Filesystem.Read), listOrNone(sb.Filesystem.Write), listOrNone(sb.Network.Allow))
		}
	}
}

// itemLine is one locked item: its key, the hints its annotations set and
// the first line of its description.
func itemLine(it lock.Item) string {
	var item struct {
		Description string
		Annotations struct {
			ReadOnlyHint    *bool
			DestructiveHint *bool
			OpenWorldHint   *bool
		}
	}
	json.Unmarshal(it.JSON, &item)
	line := "    " + escape.String(it.Key)
	var hints []string
	for _, h := range []struct {
		set  *bool
		name string
	}{
		{item.Annotations.ReadOnlyHint, "read-only"},
		{item.Annotations.DestructiveHint, "destructive"},
		{item.Annotations.OpenWorldHint, "open-world"},
	} {
		if h.set != nil && *h.set {
			hints = append(hints, h.name)
		}
	}
	if len(hints) > 0 {
		line += " [" + strings.Join(hints, ", ") + "]"
	}
	if item.Description != "" {
		line += "  " + escape.String(firstLine(item.Description, 80))
	}
	return line
}

// Command is a locked argv as one escaped line, each element quoted when
// a reader could misread it unquoted.
func Command(argv []string) string {
	return escape.String(strings.Join(QuoteArgv(argv), " "))
}

// QuoteArgv quotes the argv elements that a reader could misread unquoted:
// the empty one and those with spaces, quotes, backslashes, $ or `.
func QuoteArgv(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\"'\\$`") {
			out[i] = fmt.Sprintf("%q", a)
		} else {
			out[i] = a
		}
	}
	return out
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return strings.Join(l, ", ")
}

// firstLine returns s's first line, cut to max runes.
func firstLine(s string, max int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}
