//go:build mcpform_mutation

package e2e_test

// mutationBuild: this test binary was built for scripts/mutation.sh, so the
// mcpform it builds must carry the mutation hooks too.
const mutationBuild = true
