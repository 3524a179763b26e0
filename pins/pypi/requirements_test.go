package pypi

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

const (
	hashA = "1aaa357d52dab5078ce36137d3002195754a8a153d447d34dfa0cb337da1a63a"
	hashB = "9089580b08bd872d8155e414ec36aaeca1c3c8ad28371ca425107a3de0c307f4"
)

func TestCheckRequirements(t *testing.T) {
	good := "mcpform-hello-dep==1.0.0 --hash=sha256:" + hashA + "\nmcpform-hello-mcp==1.0.0 --hash=sha256:" + hashB + "\n"
	reqs, err := CheckRequirements([]byte(good))
	if err != nil || len(reqs) != 2 || reqs[0] != (Requirement{"mcpform-hello-dep", "1.0.0", hashA}) {
		t.Fatalf("CheckRequirements(good) = %v, %v", reqs, err)
	}
	if out, err := FormatRequirements([]Requirement{reqs[1], reqs[0]}); err != nil || string(out) != good {
		t.Errorf("FormatRequirements = %q, %v; want the sorted file", out, err)
	}
	line := func(s string) string { return s + "\n" }
	bad := map[string]string{
		"empty":             "",
		"no final newline":  strings.TrimSuffix(good, "\n"),
		"blank line":        good + "\n",
		"comment":           "# x\n" + good,
		"editable":          line("-e ./pkg"),
		"nested file":       line("-r other.txt"),
		"index url":         line("--index-url https://evil.example/simple") + good,
		"extra index":       line("--extra-index-url=https://evil.example/simple"),
		"find links":        line("--find-links /tmp"),
		"url":               line("pkg @ https://evil.example/pkg.whl --hash=sha256:" + hashA),
		"path":              line("./pkg --hash=sha256:" + hashA),
		"no hash":           line("pkg==1.0"),
		"md5":               line("pkg==1.0 --hash=md5:0123456789abcdef0123456789abcdef"),
		"sha512":            line("pkg==1.0 --hash=sha512:" + hashA + hashA),
		"two hashes":        line("pkg==1.0 --hash=sha256:" + hashA + " --hash=sha256:" + hashB),
		"upper hex":         line("pkg==1.0 --hash=sha256:" + strings.ToUpper(hashA)),
		"short hash":        line("pkg==1.0 --hash=sha256:" + hashA[:63]),
		"range":             line("pkg>=1.0 --hash=sha256:" + hashA),
		"extras":            line("pkg[x]==1.0 --hash=sha256:" + hashA),
		"marker":            line("pkg==1.0 --hash=sha256:" + hashA + " ; python_version>'3'"),
		"not normalised":    line("Pkg_X==1.0 --hash=sha256:" + hashA),
		"traversal":         line("..==1.0 --hash=sha256:" + hashA),
		"bad version":       line("pkg==1.0.x --hash=sha256:" + hashA),
		"duplicate":         line("pkg==1.0 --hash=sha256:"+hashA) + line("pkg==1.1 --hash=sha256:"+hashB),
		"unsorted":          line("pkg-b==1.0 --hash=sha256:"+hashA) + line("pkg-a==1.0 --hash=sha256:"+hashB),
		"crlf":              "pkg==1.0 --hash=sha256:" + hashA + "\r\n",
		"trailing space":    line("pkg==1.0 --hash=sha256:" + hashA + " "),
		"continuation":      line("pkg==1.0 \\") + line("    --hash=sha256:"+hashA),
		"control character": line("pkg==1.0 --hash=sha256:" + hashA + "\x1b[2J"),
	}
	for name, data := range bad {
		if reqs, err := CheckRequirements([]byte(data)); err == nil {
			t.Errorf("%s: CheckRequirements(%q) = %v, want an error", name, data, reqs)
		} else if strings.Contains(err.Error(), "\x1b") {
			t.Errorf("%s: the error %q carries the control character", name, err)
		}
	}
	var big bytes.Buffer
	for i := 0; i <= MaxPackages; i++ {
		big.WriteString(Requirement{Name: fmt.Sprintf("p%06d", i), Version: "1.0", SHA256: hashA}.Line() + "\n")
	}
	if _, err := CheckRequirements(big.Bytes()); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a file of %d packages: %v, want a refusal", MaxPackages+1, err)
	}
	if _, err := CheckRequirements(bytes.Repeat([]byte("a"), MaxRequirementsBytes+1)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a file past MaxRequirementsBytes: %v, want a refusal", err)
	}
}

// FuzzCheckRequirements: whatever the stored file holds, CheckRequirements
// does not panic, and a file it accepts is exactly what FormatRequirements
// writes of what it returned: every line a normalised name, an exact
// version and one sha256, nothing pip would read as an option.
func FuzzCheckRequirements(f *testing.F) {
	f.Add([]byte("mcpform-hello-dep==1.0.0 --hash=sha256:" + hashA + "\nmcpform-hello-mcp==1.0.0 --hash=sha256:" + hashB + "\n"))
	f.Add([]byte("a==1 --hash=sha256:" + hashA + "\n"))
	f.Add([]byte("-e ./x\n"))
	f.Add([]byte("--index-url https://evil.example/simple\na==1 --hash=sha256:" + hashA + "\n"))
	f.Add([]byte("a @ file:///etc/passwd --hash=sha256:" + hashA + "\n"))
	f.Add([]byte("b==1 --hash=sha256:" + hashA + "\na==1 --hash=sha256:" + hashB + "\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, err := CheckRequirements(data)
		if err != nil {
			return
		}
		out, err := FormatRequirements(reqs)
		if err != nil || !bytes.Equal(out, data) {
			t.Fatalf("accepted %q, which is not canonical (%q, %v)", data, out, err)
		}
		for _, r := range reqs {
			if strings.HasPrefix(r.Name, "-") || ValidName(r.Name) != nil || !ExactVersion(r.Version) || !isSHA256(r.SHA256) {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}
