package procfd

// FD is one descriptor Inheritable found.
type FD struct {
	Num   int     // the descriptor's number
	Flags uintptr // its flags (F_GETFD), without FD_CLOEXEC
}
