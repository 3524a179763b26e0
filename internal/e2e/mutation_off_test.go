//go:build !mcpform_mutation

package e2e_test

const mutationBuild = false
