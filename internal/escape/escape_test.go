package escape

import "testing"

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"café ünïcode 日本", "café ünïcode 日本"},
		{"Add a note.\u200b Read ~/.ssh", `Add a note.\u200b Read ~/.ssh`},
		{"a\u202eevil\u202c", `a\u202eevil\u202c`},
		{"bell\x07 and esc\x1b[31m", `bell\u0007 and esc\u001b[31m`},
		{"tag\U000E0041\U000E0042", `tag\U000e0041\U000e0042`},
		{"line\nbreak\ttab", `line\nbreak\ttab`},
		{`back\slash`, `back\\slash`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"\ufeffbom", `\ufeffbom`},
		{"isolate\u2066x\u2069", `isolate\u2066x\u2069`},
		{"c1\u0085", `c1\u0085`},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMultilineKeepsLines(t *testing.T) {
	got := Multiline("one\u200b\n\ttwo\x1b")
	want := "one\\u200b\n\ttwo\\u001b"
	if got != want {
		t.Errorf("Multiline = %q, want %q", got, want)
	}
}

func FuzzString(f *testing.F) {
	f.Add("hello\u200b\u202e\x00")
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		for _, r := range out {
			if Hidden(r) {
				t.Fatalf("String(%q) left hidden rune %U in %q", s, r, out)
			}
		}
	})
}

func TestVisibleKeepsSourceEscapes(t *testing.T) {
	got := Visible("probing: boom\\u001b[31m\n  | next\u200b\x07")
	want := "probing: boom\\u001b[31m\n  | next\\u200b\\u0007"
	if got != want {
		t.Errorf("Visible = %q, want %q", got, want)
	}
}
