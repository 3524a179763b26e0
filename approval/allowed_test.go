package approval

import (
	"strings"
	"testing"
	"time"
)

const edKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILYq/iWgR3am3A+J4OBAHCfjbgTsWEMKKzRNNuGRFZCY"

func TestParseAllowedSigners(t *testing.T) {
	data := `# comment

alice@example.com,*@acme.com ` + edKey + ` alice's laptop
"bob@example.com,carol@example.com" namespaces="mcpform,git",valid-after="20260101",valid-before="202701011230Z" ` + edKey + `
`
	got, err := ParseAllowedSigners([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Line != 3 || got[1].Line != 4 {
		t.Fatalf("%+v", got)
	}
	if strings.Join(got[0].Principals, ",") != "alice@example.com,*@acme.com" || got[0].Namespaces != nil {
		t.Fatalf("line 3: %+v", got[0])
	}
	b := got[1]
	if strings.Join(b.Principals, ",") != "bob@example.com,carol@example.com" || strings.Join(b.Namespaces, ",") != "mcpform,git" {
		t.Fatalf("line 4: %+v", b)
	}
	if want := time.Date(2027, 1, 1, 12, 30, 0, 0, time.UTC); !b.ValidBefore.Equal(want) {
		t.Fatalf("valid-before %v, want %v", b.ValidBefore, want)
	}
	if want := time.Date(2026, 1, 1, 0, 0, 0, 0, time.Local); !b.ValidAfter.Equal(want) {
		t.Fatalf("valid-after %v, want %v (local time without Z, as ssh-keygen reads it)", b.ValidAfter, want)
	}
	if !got[0].admits("dave@acme.com") || got[0].admits("dave@acme.community.example") {
		t.Fatal("patterns")
	}
}

func TestParseAllowedSignersRefuses(t *testing.T) {
	for line, want := range map[string]string{
		"alice@example.com":                              "principals without a key",
		`"alice@example.com ` + edKey:                    "unterminated",
		"alice@example.com,, " + edKey:                   "empty principal",
		"alice@example.com ssh-ed25519 AAAA":             "no public key",
		`alice@example.com valid-before=2027 ` + edKey:   "quoted value",
		`alice@example.com valid-before="2027" ` + edKey: "YYYYMMDD",
		`alice@example.com no-touch-required ` + edKey:   `unknown option "no-touch-required"`,
		`alice@example.com cert-authority ` + edKey:      "cert-authority",
	} {
		if _, err := ParseAllowedSigners([]byte("# x\n" + line)); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: got %v, want %q on line 2", line, err, want)
		}
	}
}

func TestMatchPattern(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"*", "", true}, {"a*", "abc", true}, {"*c", "abc", true}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"*@acme.com", "x@acme.com", true}, {"*@acme.com", "x@acme.com.evil", false}, {"a*b*c", "aXbYc", true}, {"a*b*c", "aXbY", false},
		{strings.Repeat("*a", 30) + "b", strings.Repeat("a", 1024), false},
	} {
		if got := matchPattern(c.p, c.s); got != c.want {
			t.Errorf("matchPattern(%q, %q) = %v", c.p, c.s, got)
		}
	}
}

func FuzzParseAllowedSigners(f *testing.F) {
	f.Add([]byte("alice@example.com " + edKey + "\n"))
	f.Add([]byte(`"a,b" namespaces="mcpform",valid-before="20270101Z" ` + edKey))
	f.Add([]byte("#\n\n* cert-authority " + edKey))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := ParseAllowedSigners(data)
		if err != nil {
			return
		}
		for _, l := range lines {
			if l.Key == nil || len(l.Principals) == 0 {
				t.Fatalf("a line without a key or principals: %+v", l)
			}
			l.admits("alice@example.com")
		}
	})
}
