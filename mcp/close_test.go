package mcp

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Writes while Close runs never add to the wait group Close waits on (a
// race report under -race, or a panic): once Close has begun, a write is
// refused.
func TestWriteDuringClose(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, findID(b))
	}))
	defer ts.Close()
	for i := 0; i < 200; i++ {
		h, err := dialHTTP(ServerSpec{Name: "remote", URL: ts.URL, Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		go io.Copy(io.Discard, h)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				h.Write([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}` + "\n"))
			}
		}()
		go func() { defer wg.Done(); h.Close() }()
		wg.Wait()
	}
}
