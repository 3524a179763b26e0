package pipe

import "sync"

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// GetLine returns an empty buffer to build one line in; PutLine gives it
// back once the line was handed to a Writer (which copies what it keeps).
func GetLine() *[]byte { return linePool.Get().(*[]byte) }

// PutLine returns b to the pool, unless it grew past 64 KiB.
func PutLine(b *[]byte) {
	if cap(*b) <= 64<<10 {
		*b = (*b)[:0]
		linePool.Put(b)
	}
}
