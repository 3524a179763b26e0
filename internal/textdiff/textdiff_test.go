package textdiff

import "testing"

func TestUnified(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"a\nb\nc\n", "a\nB\nc\n", "--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"", "a\n", "--- x\n+++ y\n@@ -0,0 +1 @@\n+a\n"},
		{"a\n", "", "--- x\n+++ y\n@@ -1 +0,0 @@\n-a\n"},
		{"a", "a\n", "--- x\n+++ y\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"},
		// Two changes far apart make two hunks.
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "X\n2\n3\n4\n5\n6\n7\n8\n9\nY\n",
			"--- x\n+++ y\n@@ -1,4 +1,4 @@\n-1\n+X\n 2\n 3\n 4\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+Y\n"},
	}
	for _, tt := range tests {
		if got := Unified("x", "y", tt.a, tt.b); got != tt.want {
			t.Errorf("Unified(%q, %q) =\n%s\nwant\n%s", tt.a, tt.b, got, tt.want)
		}
	}
}
