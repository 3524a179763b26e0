//go:build mcpform_mutation

package mutation

import "os"

// Off reports whether MCPFORM_MUTATION names the protection name.
func Off(name string) bool { return os.Getenv("MCPFORM_MUTATION") == name }

// Env passes MCPFORM_MUTATION on to a re-executed process.
func Env() []string {
	if v := os.Getenv("MCPFORM_MUTATION"); v != "" {
		return []string{"MCPFORM_MUTATION=" + v}
	}
	return nil
}
