package taint

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// StatePrefix starts every requestState mcpform issues: a retry carrying a
// state without it answers some other party's input_required (the
// server's), and proves no approval.
const StatePrefix = "mcpform-taint.v1."

// Claims is what a requestState binds an approval to. The 2026-07-28 spec
// makes requestState attacker-controlled input; every field is checked on
// the retry (see Check), and the nonce is redeemed once (Store.Redeem).
type Claims struct {
	Session string `json:"s"`
	Server  string `json:"v"`
	Tool    string `json:"t"`
	// Args is the digest of the call's arguments: an approval of
	// send_email to a colleague does not approve one to an attacker.
	Args    string `json:"a"`
	Nonce   string `json:"n"`
	Expires int64  `json:"e"` // unix seconds
	// Carried says the call continues an earlier round of it (another
	// party's requestState and the client's answers), which the run that
	// asked for the approval kept and puts back once it is given.
	Carried bool `json:"c,omitempty"`
}

// NewClaims returns claims for a call, valid for ttl from now.
func NewClaims(session, server, tool, args string, now time.Time, ttl time.Duration) (Claims, error) {
	var n [16]byte
	if _, err := rand.Read(n[:]); err != nil {
		return Claims{}, fmt.Errorf("requestState nonce: %w", err)
	}
	return Claims{Session: session, Server: server, Tool: tool, Args: args, Nonce: hex.EncodeToString(n[:]), Expires: now.Add(ttl).Unix()}, nil
}

// Seal encodes c as StatePrefix + base64url(JSON) + "." + base64url(HMAC-SHA256).
func Seal(key []byte, c Claims) (string, error) {
	if len(key) < 32 {
		return "", errors.New("requestState key too short")
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	body := base64.RawURLEncoding.EncodeToString(payload)
	return StatePrefix + body + "." + base64.RawURLEncoding.EncodeToString(mac(key, body)), nil
}

func mac(key []byte, body string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(StatePrefix))
	m.Write([]byte(body))
	return m.Sum(nil)
}

// errForged is a requestState whose signature does not verify: not issued
// with this session's key (another session's, a reset one's, or made up).
var errForged = errors.New("the requestState was not issued by mcpform for this session")

// Unseal verifies s with key and returns its claims. Nothing in it is
// trusted before the MAC verified.
func Unseal(key []byte, s string) (Claims, error) {
	rest, ok := strings.CutPrefix(s, StatePrefix)
	if !ok || len(key) < 32 || len(s) > 4096 {
		return Claims{}, errForged
	}
	body, sig, ok := strings.Cut(rest, ".")
	if !ok {
		return Claims{}, errForged
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(key, body)) {
		return Claims{}, errForged
	}
	payload, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return Claims{}, errForged
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return Claims{}, errForged
	}
	return c, nil
}

// Check compares verified claims with the retry they came with.
func (c Claims) Check(session, server, tool, args string, now time.Time) error {
	switch {
	case c.Session != session:
		return errors.New("the approval belongs to another session")
	case c.Server != server || c.Tool != tool:
		return errors.New("the approval was for another tool")
	case c.Args != args:
		return errors.New("the arguments changed after the approval was asked for")
	case now.Unix() > c.Expires:
		return errors.New("the approval expired")
	case c.Nonce == "":
		return errForged
	}
	return nil
}
