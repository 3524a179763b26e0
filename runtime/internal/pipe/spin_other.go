//go:build !linux

package pipe

import "time"

// spinner is a Linux measure; elsewhere readers park at once.
type spinner struct{}

func newSpinner(time.Duration, ...any) *spinner { return nil }

func (*spinner) wait(int32, *spinState) bool { return false }
