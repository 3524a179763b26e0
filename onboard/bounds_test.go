package onboard

import (
	"strings"
	"testing"
)

// TestClientFileBounds: a file nested past the bound, or too large, is
// refused with where and why before hujson reads it; brackets in strings
// and comments do not count, and a file at the bound is read.
func TestClientFileBounds(t *testing.T) {
	deep := func(n int) string {
		return `{"mcpServers": {}, "x": ` + strings.Repeat("[", n) + strings.Repeat("]", n) + "}"
	}
	for _, tc := range []struct {
		name, data, want string
	}{
		{"100,000 levels", deep(100000), "nest more than 256 deep"},
		{"one past the bound", deep(maxClientNesting), "nest more than 256 deep"}, // the object and 256 arrays
		{"too large", `{"mcpServers": {}, "x": "` + strings.Repeat("a", maxClientFileBytes) + `"}`, "over the 4194304"},
		{"the line of the deep one", "{\n\n\"x\": " + strings.Repeat("[", 300), "line 3:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readClientFile([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("readClientFile error = %v, want it to say %q", err, tc.want)
			}
			_, err = standardJSON([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("standardJSON error = %v, want it to say %q", err, tc.want)
			}
		})
	}
	for _, ok := range []string{
		deep(maxClientNesting - 1), // the object and 255 arrays: exactly the bound
		`{"mcpServers": {}, "s": "` + strings.Repeat("[", 1000) + `"}`,
		"{\"mcpServers\": {}, // " + strings.Repeat("[", 1000) + "\n}",
		"{\"mcpServers\": {} /* " + strings.Repeat("{", 1000) + " */}",
		`{"mcpServers": {}, "s": "\"` + strings.Repeat("[", 1000) + `"}`,
	} {
		if _, err := readClientFile([]byte(ok)); err != nil {
			t.Errorf("readClientFile(%.40q…): %v", ok, err)
		}
	}
}
