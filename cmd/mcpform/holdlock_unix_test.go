//go:build unix

package main

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

func init() { testCommands["holdlock"] = holdLock }

// holdLock is the test command `holdlock`: it takes the advisory lock on
// the current directory that a writing apply holds (lock.UpdateWait takes it
// through internal/lockedfile), creates the file "held", and keeps the lock
// until a file "release" appears, then for one second more, so that an
// apply started then has to wait for it.
func holdLock() {
	d, err := os.Open(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := unix.Flock(int(d.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		fmt.Fprintln(os.Stderr, "holdlock:", err)
		os.Exit(1)
	}
	if err := os.WriteFile("held", nil, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat("release"); err == nil {
			break
		}
	}
	time.Sleep(time.Second)
	// Closed here, not by d's finalizer: d is otherwise unused after the
	// flock, and a collection could close it (releasing the lock) early.
	d.Close()
	fmt.Println("holdlock: released")
}
