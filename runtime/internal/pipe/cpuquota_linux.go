package pipe

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// cgroupCPUs returns the CPU quota, in CPUs, of the process's cgroup and
// its ancestors (the smallest on the way up), from cgroup v2's cpu.max or
// cgroup v1's cpu controller, found through procSelf's cgroup and
// mountinfo; ok is false when no quota is set or none can be read.
func cgroupCPUs(procSelf string) (cpus float64, ok bool) {
	groups, err := os.ReadFile(filepath.Join(procSelf, "cgroup"))
	if err != nil {
		return 0, false
	}
	mounts, err := os.ReadFile(filepath.Join(procSelf, "mountinfo"))
	if err != nil {
		return 0, false
	}
	var v1, v2 string // the process's cgroup in each hierarchy
	for _, line := range strings.Split(string(groups), "\n") {
		f := strings.SplitN(line, ":", 3)
		switch {
		case len(f) != 3:
		case f[0] == "0" && f[1] == "":
			v2 = f[2]
		case slices.Contains(strings.Split(f[1], ","), "cpu"):
			v1 = f[2]
		}
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		pre, post, found := strings.Cut(line, " - ")
		m, fs := strings.Fields(pre), strings.Fields(post)
		if !found || len(m) < 5 || len(fs) < 3 {
			continue
		}
		root, point := m[3], m[4]
		var c float64
		var limited bool
		switch {
		case fs[0] == "cgroup2" && v2 != "":
			c, limited = walkQuota(point, root, v2, func(dir string) (float64, bool) {
				b, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
				return parseCPUMax(string(b)), err == nil
			})
		case fs[0] == "cgroup" && v1 != "" && slices.Contains(strings.Split(fs[2], ","), "cpu"):
			c, limited = walkQuota(point, root, v1, func(dir string) (float64, bool) {
				q, err1 := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
				p, err2 := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
				return parseCPUMax(strings.TrimSpace(string(q)) + " " + string(p)), err1 == nil && err2 == nil
			})
		}
		if limited && (!ok || c < cpus) {
			cpus, ok = c, true
		}
	}
	return cpus, ok
}

// walkQuota reads quota in the directory of cgroup group under a mount of
// its hierarchy at point (whose root is root), and in each ancestor up to
// the mount point, and returns the smallest limit.
func walkQuota(point, root, group string, quota func(dir string) (float64, bool)) (cpus float64, ok bool) {
	root, group = path.Clean(root), path.Clean("/"+group)
	var rel string
	switch {
	case root == "/":
		rel = group
	case group == root:
		rel = "/"
	case strings.HasPrefix(group, root+"/"):
		rel = group[len(root):]
	default:
		return 0, false // the group is not under this mount
	}
	for ; ; rel = path.Dir(rel) {
		if c, read := quota(filepath.Join(point, rel)); read && c > 0 && (!ok || c < cpus) {
			cpus, ok = c, true
		}
		if rel == "/" {
			return cpus, ok
		}
	}
}

// parseCPUMax reads "QUOTA PERIOD" (cgroup v2's cpu.max, or v1's quota
// and period) as CPUs; 0 when there is no limit (QUOTA "max", or -1).
func parseCPUMax(s string) float64 {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0
	}
	quota, err1 := strconv.ParseFloat(f[0], 64)
	period, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || quota <= 0 || period <= 0 {
		return 0
	}
	return quota / period
}
