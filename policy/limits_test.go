package policy

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0":          0,
		"1048576":    1 << 20,
		"1000B":      1000,
		"512MiB":     512 << 20,
		"2GiB":       2 << 30,
		"1TiB":       1 << 40,
		"4KiB":       4 << 10,
		"1GB":        1e9,
		"1 GB":       1e9,
		" 2 MiB ":    2 << 20,
		"3KB":        3000,
		"4194304TiB": 1 << 62,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"":                     "is not a whole number",
		"GiB":                  "is not a whole number",
		"-1":                   "is not a whole number",
		"-1MiB":                "is not a whole number",
		"+1":                   "is not a whole number",
		"1.5GiB":               "is not a whole number",
		"1gib":                 "is not a whole number",
		"1G":                   "is not a whole number",
		"1 gigabyte":           "is not a whole number",
		"0x10":                 "is not a whole number",
		"1e9":                  "is not a whole number",
		"4194305TiB":           "is too large",
		"5000000TiB":           "is too large",
		"99999999999999999999": "is not a whole number",
	} {
		if n, err := ParseSize(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSize(%q) = %d, %v; want an error that %s", in, n, err, want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{
		0:           "0B",
		1000:        "1000B",
		1 << 10:     "1KiB",
		1536 << 20:  "1536MiB",
		2 << 30:     "2GiB",
		1 << 40:     "1TiB",
		3<<40 + 1:   "3298534883329B",
		MinMemory:   "32MiB",
		minFileSize: "1MiB",
	} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", n, back, err)
		}
	}
}

func TestLimitsEffective(t *testing.T) {
	var none *Limits
	if got := none.Effective(); got != DefaultLimits {
		t.Errorf("nil.Effective() = %+v, want the defaults", got)
	}
	if got := (&Limits{}).Effective(); got != DefaultLimits {
		t.Errorf("empty.Effective() = %+v, want the defaults", got)
	}
	got := (&Limits{Memory: 1 << 30, Files: 100}).Effective()
	want := Limits{Memory: 1 << 30, Processes: DefaultLimits.Processes, Files: 100, FileSize: DefaultLimits.FileSize}
	if got != want {
		t.Errorf("Effective() = %+v, want %+v", got, want)
	}
	if DefaultLimits.Check() != nil {
		t.Errorf("the defaults fail Check: %v", DefaultLimits.Check())
	}
}

func TestLimitsCheck(t *testing.T) {
	for _, l := range []*Limits{
		nil, {},
		{Memory: MinMemory, Processes: MinProcesses, Files: minFiles, FileSize: minFileSize},
		{Memory: 1 << 62, Processes: 1 << 30, Files: 1 << 30, FileSize: 1 << 62},
	} {
		if err := l.Check(); err != nil {
			t.Errorf("%+v: %v", l, err)
		}
	}
	for _, tc := range []struct {
		l    Limits
		want string
	}{
		{Limits{Memory: MinMemory - 1}, "limits.memory is below 32MiB"},
		{Limits{Memory: -1}, "limits.memory is below 32MiB"},
		{Limits{Processes: MinProcesses - 1}, "limits.processes is below 8"},
		{Limits{Files: minFiles - 1}, "limits.files is below 64"},
		{Limits{FileSize: minFileSize - 1}, "limits.file_size is below 1MiB"},
		// The first in field order is reported.
		{Limits{Processes: 1, FileSize: 1}, "limits.processes"},
	} {
		err := tc.l.Check()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: Check() = %v, want %q…", tc.l, err, tc.want)
		}
	}
}

// FuzzParseSize: ParseSize never panics, gives a size from 0 to 2^62, and
// FormatSize writes that size so that ParseSize reads it back.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"512MiB", "2GiB", "1 GB", "1048576", "4194304TiB", "-1", "1.5KiB", "B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 0 || n > 1<<62 {
			t.Fatalf("ParseSize(%q) = %d, out of range", s, n)
		}
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Fatalf("ParseSize(FormatSize(%d)) = %d, %v (from %q)", n, back, err, s)
		}
	})
}
