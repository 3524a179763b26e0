package benchclient

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// Client sends requests on one stream and matches the responses read from
// another by id. Calls may be made from many goroutines at once.
type Client struct {
	w       io.Writer
	wmu     sync.Mutex
	mu      sync.Mutex
	next    int64
	pending map[string]chan struct{}
}

// New returns a Client writing to w and reading responses from r until r
// ends.
func New(w io.Writer, r io.Reader) *Client {
	c := &Client{w: w, pending: map[string]chan struct{}{}}
	go c.read(r)
	return c
}

func (c *Client) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return
		}
		// Responses start {"jsonrpc":"2.0","id":N,…: the id is found
		// cheaply, so the client costs the same both ways.
		i := bytes.Index(line, []byte(`"id":`))
		if i < 0 {
			continue
		}
		rest := line[i+5:]
		j := bytes.IndexAny(rest, ",}")
		if j < 0 {
			continue
		}
		c.mu.Lock()
		ch := c.pending[string(rest[:j])]
		delete(c.pending, string(rest[:j]))
		c.mu.Unlock()
		if ch != nil {
			close(ch)
		}
	}
}

// Call sends one request (params is raw JSON) and waits for its response,
// at most 30 seconds.
func (c *Client) Call(method, params string) error {
	c.mu.Lock()
	c.next++
	id := strconv.FormatInt(c.next, 10)
	ch := make(chan struct{})
	c.pending[id] = ch
	c.mu.Unlock()
	c.wmu.Lock()
	_, err := io.WriteString(c.w, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":`+params+"}\n")
	c.wmu.Unlock()
	if err != nil {
		return err
	}
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-t.C:
		return fmt.Errorf("no answer to %s within 30s", method)
	}
}
