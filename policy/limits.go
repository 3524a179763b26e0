package policy

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits bound what a sandboxed server may use: the "limits" block of
// policy.sandbox. A zero field takes its value from DefaultLimits.
type Limits struct {
	// Memory is the most memory, in bytes, the server's processes may use
	// together (a memory cgroup) or each (RLIMIT_DATA, without one).
	Memory int64 `json:"memory,omitempty"`
	// Processes is the most processes and threads the server may have.
	Processes int `json:"processes,omitempty"`
	// Files is the most open files each process may have (RLIMIT_NOFILE).
	Files int `json:"files,omitempty"`
	// FileSize is the largest file, in bytes, the server may write
	// (RLIMIT_FSIZE).
	FileSize int64 `json:"fileSize,omitempty"`
}

// DefaultLimits are the limits of a sandbox that sets none: far above what
// an MCP server written in Node, Python or Go uses (tens to a few hundred
// MiB, a few dozen threads, a few hundred files), and low enough that a fork
// bomb or a runaway allocation stops inside the sandbox.
var DefaultLimits = Limits{
	Memory:    2 << 30,
	Processes: 256,
	Files:     4096,
	FileSize:  1 << 30,
}

// Bounds below which a limit is refused: a server cannot start under them.
const (
	MinMemory    = 32 << 20
	MinProcesses = 8
	minFiles     = 64
	minFileSize  = 1 << 20
)

// Effective returns l with each zero field replaced by its default. A nil
// l is DefaultLimits.
func (l *Limits) Effective() Limits {
	out := DefaultLimits
	if l == nil {
		return out
	}
	if l.Memory != 0 {
		out.Memory = l.Memory
	}
	if l.Processes != 0 {
		out.Processes = l.Processes
	}
	if l.Files != 0 {
		out.Files = l.Files
	}
	if l.FileSize != 0 {
		out.FileSize = l.FileSize
	}
	return out
}

// Check reports the first limit that is set and below its bound (or
// negative).
func (l *Limits) Check() error {
	if l == nil {
		return nil
	}
	for _, c := range []struct {
		name   string
		v, min int64
		size   bool
	}{
		{"memory", l.Memory, MinMemory, true},
		{"processes", int64(l.Processes), MinProcesses, false},
		{"files", int64(l.Files), minFiles, false},
		{"file_size", l.FileSize, minFileSize, true},
	} {
		if c.v == 0 {
			continue
		}
		if c.v < c.min {
			show := strconv.FormatInt(c.min, 10)
			if c.size {
				show = FormatSize(c.min)
			}
			return fmt.Errorf("limits.%s is below %s, under which a server cannot start", c.name, show)
		}
	}
	return nil
}

// sizeUnits are the suffixes ParseSize accepts, binary and decimal.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1},
}

// ParseSize parses a size such as "512MiB", "2GiB", "1GB" or "1048576"
// (bytes) into bytes. The number is a non-negative integer.
func ParseSize(s string) (int64, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || num == "" || num[0] == '+' {
		return 0, fmt.Errorf("size %q is not a whole number with an optional unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), such as \"512MiB\"", s)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}

// FormatSize writes n bytes in the largest binary unit that divides it
// ("2GiB", "1536MiB", "1000B").
func FormatSize(n int64) string {
	for _, u := range sizeUnits[:4] {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
