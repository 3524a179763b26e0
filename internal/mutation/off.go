//go:build !mcpform_mutation

package mutation

// Off reports whether the protection name is switched off: never, in this
// build.
func Off(name string) bool { return false }

// Env is what a re-executed process (the sandbox's stages) needs in its
// environment to see the same mutation: nothing, in this build.
func Env() []string { return nil }
