package oauth

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseRecord: parseRecord reads a file in the state directory, which
// anything running as the user could have written. It never panics, and
// what it accepts names a server and holds an access token, and a refresh
// token only with where to refresh it.
func FuzzParseRecord(f *testing.F) {
	valid, _ := json.Marshal(testRecord("https://mcp.example.com/mcp"))
	f.Add(valid)
	f.Add([]byte(`{"url":"https://mcp.example.com/mcp","token":{"accessToken":"a"}}`))
	f.Add([]byte(`{"url":"https://mcp.example.com/mcp","token":{"accessToken":"a","refreshToken":"r"}}`))
	f.Add([]byte(`{"url":"https://mcp.example.com/mcp","clientId":"c","tokenUrl":"https://as/token","token":{"accessToken":"a","refreshToken":"r","expiry":"2030-01-01T00:00:00Z"}}`))
	f.Add([]byte(`{"url":"","token":{"accessToken":"a"}}`))
	f.Add([]byte(`{"url":"https://mcp.example.com/mcp","token":{}}`))
	f.Add([]byte(`{"url":"https://mcp.example.com/mcp","token":{"accessToken":"a","expiry":"yesterday"}}`))
	f.Add([]byte(`{"url":"https://mcp.example.com/mcp","authStyle":"x","token":{"accessToken":"a"}}`))
	f.Add([]byte(`{"url":1}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{`))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseRecord(b)
		if err != nil {
			if r != nil {
				t.Fatalf("a record and an error: %+v, %v", r, err)
			}
			return
		}
		switch {
		case r.URL == "":
			t.Fatalf("accepted a record that names no server: %q", b)
		case r.Token.AccessToken == "":
			t.Fatalf("accepted a record without an access token: %q", b)
		case r.Token.RefreshToken != "" && (r.TokenURL == "" || r.ClientID == ""):
			t.Fatalf("accepted a refresh token without where to refresh it: %q", b)
		}
	})
}

// The records parseRecord refuses, each for what it lacks.
func TestParseRecordRefuses(t *testing.T) {
	for in, want := range map[string]string{
		`{"token":{"accessToken":"a"}}`:                                                                 "names no server",
		`{"url":"https://x.example.com","token":{}}`:                                                    "no access token",
		`{"url":"https://x.example.com","token":{"accessToken":"a","refreshToken":"r"}}`:                "not where to refresh it",
		`{"url":"https://x.example.com","clientId":"c","token":{"accessToken":"a","refreshToken":"r"}}`: "not where to refresh it",
		`not json`: "not a login record",
	} {
		r, err := parseRecord([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseRecord(%s) = %+v, %v; want an error saying %q", in, r, err, want)
		}
	}
}
