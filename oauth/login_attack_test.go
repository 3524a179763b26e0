package oauth

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The authorization endpoint comes from metadata the server controls,
// and a browser opens what it is given: only https, or http to a
// loopback address, is shown.
func TestAttackCheckAuthURL(t *testing.T) {
	for _, ok := range []string{"https://as.example.com/authorize?client_id=x", "http://127.0.0.1:9000/authorize", "http://localhost/authorize", "http://[::1]:8080/a"} {
		if err := checkAuthURL(ok); err != nil {
			t.Errorf("checkAuthURL(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"javascript:alert(document.cookie)", "JavaScript://as.example.com/%0aalert(1)", "file:///etc/passwd", "file://host/share",
		"http://as.example.com/authorize", "http://10.0.0.1/authorize", "data:text/html,<script>alert(1)</script>", "vbscript:msgbox(1)", "/authorize", "", "https:///x"} {
		err := checkAuthURL(bad)
		if err == nil {
			t.Errorf("checkAuthURL(%q) accepted it", bad)
			continue
		}
		if strings.ContainsAny(err.Error(), "\n\x1b") {
			t.Errorf("the refusal is not escaped: %q", err)
		}
	}
}

func callbackGet(t *testing.T, cb *callback, query string) (int, string) {
	t.Helper()
	resp, err := http.Get(cb.redirect + "?" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The loopback redirect takes one answer: a second callback (another
// tab, a local process racing the browser) is refused with 409, both
// before and after the flow took the first.
func TestAttackCallbackOnce(t *testing.T) {
	for _, taken := range []bool{false, true} {
		cb, err := listenLoopback()
		if err != nil {
			t.Fatal(err)
		}
		cb.expect("s")
		if code, _ := callbackGet(t, cb, "code=first&state=s"); code != http.StatusOK {
			t.Fatalf("the first callback got %d", code)
		}
		if taken {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			res, err := cb.fetch(ctx, LoginConfig{Name: "remote"}, "https://as.example.com/authorize?state=s")
			cancel()
			if err != nil || res.Code != "first" {
				t.Fatalf("fetch = %+v, %v; want the first code", res, err)
			}
		}
		if code, body := callbackGet(t, cb, "code=second&state=s"); code != http.StatusConflict {
			t.Errorf("flow took the first: %v; a second callback got %d %q, want 409", taken, code, body)
		}
		cb.close()
	}
}

// An error callback becomes an error with the server's words escaped,
// and the page the browser gets escapes them as HTML.
func TestAttackCallbackError(t *testing.T) {
	cb, err := listenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	defer cb.close()
	q := url.Values{"error": {"access_denied<script>alert(1)</script>"}, "error_description": {"<script>alert(1)</script>\x1b[2J\r\nforged line\u202e"}, "state": {"s"}}
	cb.expect("s")
	code, body := callbackGet(t, cb, q.Encode())
	if code != http.StatusOK {
		t.Fatalf("the callback got %d", code)
	}
	if strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") {
		t.Errorf("the page does not escape the error: %q", body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = cb.fetch(ctx, LoginConfig{Name: "remote"}, "https://as.example.com/authorize?state=s")
	if err == nil {
		t.Fatal("an error callback was taken as an authorization")
	}
	msg := err.Error()
	if !strings.Contains(msg, "access_denied") || !strings.Contains(msg, "refused") {
		t.Errorf("the error does not say the authorization server refused: %q", msg)
	}
	for _, r := range msg {
		if r < 0x20 || r == 0x7f || r == '\u202e' {
			t.Errorf("the error holds the raw character %U: %q", r, msg)
		}
	}
}
