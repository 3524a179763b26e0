package lang

import (
	"fmt"
	"sort"

	"github.com/agext/levenshtein"
)

// didYouMean returns " Did you mean "x"?" for the candidate closest to s,
// or "" when none is close enough to be a likely typo.
func didYouMean(s string, candidates []string) string {
	if c := Suggest(s, candidates); c != "" {
		return fmt.Sprintf(" Did you mean %q?", c)
	}
	return ""
}

// Suggest returns the candidate closest to s by edit distance, within 2
// edits (1 for names of three letters or fewer), preferring the first in
// sorted order on a tie; "" when none is close enough to be a likely typo.
// It is the one "Did you mean" of mcpform: diagnostics here, and the CLI's
// unknown commands, servers, rule ids and environment names.
func Suggest(s string, candidates []string) string {
	limit := 3
	if len(s) <= 3 {
		limit = 2
	}
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	best, bestD := "", limit
	for _, c := range sorted {
		if c == s {
			continue
		}
		if d := EditDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// EditDistance is the Levenshtein distance between a and b, in runes
// (github.com/agext/levenshtein, which hcl already links).
func EditDistance(a, b string) int { return levenshtein.Distance(a, b, nil) }
