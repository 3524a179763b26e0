// Package render prints a plan.Plan: the Terraform-style human text, the
// versioned JSON format and markdown for a pull-request comment. It is the
// only place in plan that prints, and it escapes every string a server sent.
package render
