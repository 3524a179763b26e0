package mcp

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func readAll(r *Reader) (lines []string, errs []string) {
	for {
		line, err := r.ReadLine()
		if err == io.EOF {
			return lines, errs
		}
		if err != nil {
			var tl *LineTooLongError
			if !errors.As(err, &tl) {
				return lines, append(errs, "fatal: "+err.Error())
			}
			lines = append(lines, "<too long>")
			continue
		}
		lines = append(lines, string(line))
	}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"lines", "{\"a\":1}\n{\"b\":2}\n", 0, []string{`{"a":1}`, `{"b":2}`}},
		{"crlf and blank lines", "a\r\n\n  \r\nb\n", 0, []string{"a", "b"}},
		{"last line without newline", "a\nb", 0, []string{"a", "b"}},
		{"at the cap", "12345\n123456\n12\n", 5, []string{"12345", "<too long>", "12"}},
		{"over the cap without newline at the end", "1234567", 5, []string{"<too long>"}},
		{"long lines across buffers", strings.Repeat("x", 100) + "\n" + strings.Repeat("y", 40) + "\nz\n", 50, []string{"<too long>", strings.Repeat("y", 40), "z"}},
		{"big line under a big cap", strings.Repeat("x", 200<<10) + "\nok\n", 0, []string{strings.Repeat("x", 200<<10), "ok"}},
		{"huge line over the cap", strings.Repeat("x", 300<<10) + "\nok\n", 100 << 10, []string{"<too long>", "ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, src := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				got, errs := readAll(NewReader(src, tt.max))
				if errs != nil {
					t.Fatal(errs)
				}
				if d := cmp.Diff(tt.want, got); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			}
		})
	}
}

func TestRing(t *testing.T) {
	r := newRing(8)
	r.Write([]byte("abc"))
	if got := r.String(); got != "abc" {
		t.Errorf("%q", got)
	}
	r.Write([]byte("defghij"))
	if got := r.String(); got != "cdefghij" {
		t.Errorf("%q", got)
	}
	r.Write([]byte("kl"))
	if got := r.String(); got != "efghijkl" {
		t.Errorf("%q", got)
	}
	r.Write([]byte("0123456789"))
	if got := r.String(); got != "23456789" {
		t.Errorf("%q", got)
	}
	r.Write([]byte("x"))
	if got := r.String(); got != "3456789x" {
		t.Errorf("%q", got)
	}
}

// TestReaderBuffered: Buffered is true exactly when the next ReadLine has a
// whole line without reading, so a batching reader never waits with output
// held back.
func TestReaderBuffered(t *testing.T) {
	pr, pw := io.Pipe()
	r := NewReader(pr, 8)
	go io.WriteString(pw, "a\nb\nc")
	if line, err := r.ReadLine(); err != nil || string(line) != "a" {
		t.Fatalf("ReadLine = %q, %v", line, err)
	}
	if !r.Buffered() {
		t.Fatal(`Buffered() = false with "b\n" in the buffer`)
	}
	if line, _ := r.ReadLine(); string(line) != "b" {
		t.Fatalf("ReadLine = %q", line)
	}
	if r.Buffered() {
		t.Fatal(`Buffered() = true with only "c", no newline, in the buffer`)
	}
	go io.WriteString(pw, strings.Repeat("x", 20)+strings.Repeat("y", 20)+"\nd\n")
	_, err := r.ReadLine()
	var tooLong *LineTooLongError
	if !errors.As(err, &tooLong) {
		t.Fatalf("ReadLine = %v; want the over-long line refused", err)
	}
	// Refused only once read to its end, with its head and tail kept.
	// (The "c" left without a newline above begins it.)
	if want := "c" + strings.Repeat("x", 20) + strings.Repeat("y", 20); string(tooLong.Head) != want || string(tooLong.Tail) != want {
		t.Errorf("head %q, tail %q; want the whole short line in both", tooLong.Head, tooLong.Tail)
	}
	if line, _ := r.ReadLine(); string(line) != "d" {
		t.Fatalf("ReadLine = %q, want d", line)
	}
	// Blank lines are skipped by ReadLine, so they are nothing to read.
	go io.WriteString(pw, "e\n\r\n \n")
	if line, _ := r.ReadLine(); string(line) != "e" {
		t.Fatalf("ReadLine = %q, want e", line)
	}
	if r.Buffered() {
		t.Fatal("Buffered() = true with only blank lines in the buffer")
	}
	pw.Close()
}
