package judge

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpform/mcpform/internal/strictjson"
)

// PromptVersion names the prompt in prompt/v1.txt. Every answer records
// it; a prompt whose wording changes is a new file and a new version, so a
// verdict always says which question it answered.
const PromptVersion = "v1"

//go:embed prompt/v1.txt
var prompt string

// Prompt is the system prompt every judge is sent (PromptVersion).
func Prompt() string { return prompt }

// Limits of one request.
const (
	// MaxResponse bounds the bytes read of an endpoint's response.
	MaxResponse = 1 << 20
	// maxAnswerTokens is the max_tokens of a request: a verdict is one
	// short JSON object.
	maxAnswerTokens = 300
)

// Config is one judge block of mcp.hcl, as lang evaluated it.
type Config struct {
	// Name is the block's label.
	Name string
	// Endpoint is the chat-completions URL (…/chat/completions), https or
	// plain http to a loopback host.
	Endpoint string
	Model    string
	// APIKeyEnv names the environment variable holding the API key; ""
	// sends no Authorization header (a local endpoint may need none).
	APIKeyEnv    string
	Timeout      time.Duration
	BudgetTokens int
}

// Question is one changed text put to the jury.
type Question struct {
	// Field says what the text is: "tool description", "instructions".
	Field  string
	Before string
	After  string
}

// Answer is one judge's answer to one Question. Exactly one of Verdict and
// Err is set. Reason and Err are untrusted text (Err may quote what the
// endpoint sent): escape them before printing.
type Answer struct {
	Judge         string
	Model         string
	PromptVersion string
	Verdict       Verdict
	Confidence    float64
	Reason        string
	Err           string
}

// judge is one configured judge and its budget for the plan.
type judge struct {
	cfg    Config
	key    string // "" when APIKeyEnv is unset
	keyErr string // why the key could not be read
	client *http.Client

	mu       sync.Mutex
	spent    int // tokens the endpoint reported (or estimated) so far
	reserved int // tokens of requests in flight
}

// Jury is the judges of one plan. Its budgets last as long as it does:
// make one per plan.
type Jury struct {
	judges []*judge
}

// NewJury makes the jury of cfgs. lookupEnv reads each api_key_env (nil
// reads none: every judge with a key errs). client is the HTTP client
// (nil: a client of its own that follows no redirect). A judge whose key
// is missing is still on the jury: each of its answers is a judge error
// saying so.
func NewJury(cfgs []Config, lookupEnv func(string) (string, bool), client *http.Client) *Jury {
	if client == nil {
		client = &http.Client{
			Transport: http.DefaultTransport.(*http.Transport).Clone(),
			// A redirect would take the key and both texts somewhere the
			// configuration does not name.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	j := &Jury{}
	for _, c := range cfgs {
		jd := &judge{cfg: c, client: client}
		if c.APIKeyEnv != "" {
			v, ok := "", false
			if lookupEnv != nil {
				v, ok = lookupEnv(c.APIKeyEnv)
			}
			if !ok || v == "" {
				jd.keyErr = fmt.Sprintf("the environment variable %s (api_key_env) is not set: set it to the endpoint's API key", c.APIKeyEnv)
			}
			jd.key = v
		}
		j.judges = append(j.judges, jd)
	}
	return j
}

// Len is the number of judges.
func (j *Jury) Len() int {
	if j == nil {
		return 0
	}
	return len(j.judges)
}

// Ask puts q to every judge at once and returns their answers in the
// jury's order. It never fails: a judge that cannot answer gives an
// Answer with Err set.
func (j *Jury) Ask(ctx context.Context, q Question) []Answer {
	out := make([]Answer, len(j.judges))
	var wg sync.WaitGroup
	for i, jd := range j.judges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = jd.ask(ctx, q)
		}()
	}
	wg.Wait()
	return out
}

func (jd *judge) ask(ctx context.Context, q Question) Answer {
	a := Answer{Judge: jd.cfg.Name, Model: jd.cfg.Model, PromptVersion: PromptVersion}
	v, conf, reason, err := jd.call(ctx, q)
	if err != nil {
		a.Err = jd.redact(err.Error())
		return a
	}
	a.Verdict, a.Confidence, a.Reason = v, conf, jd.redact(reason)
	return a
}

// redact removes the API key from text an endpoint could have echoed it
// into.
func (jd *judge) redact(s string) string {
	if jd.key == "" {
		return s
	}
	return strings.ReplaceAll(s, jd.key, "[redacted]")
}

type chatRequest struct {
	Model          string        `json:"model"`
	Messages       []chatMessage `json:"messages"`
	Temperature    float64       `json:"temperature"`
	MaxTokens      int           `json:"max_tokens"`
	ResponseFormat struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage *struct {
		TotalTokens *int64 `json:"total_tokens"`
	} `json:"usage"`
}

// Request is the body sent for q, as bytes (exported for the tests and
// the benchmark of what a judge costs mcpform).
func Request(model string, q Question) ([]byte, error) {
	user, err := marshal(struct {
		Field  string `json:"field"`
		Before string `json:"before"`
		After  string `json:"after"`
	}{q.Field, q.Before, q.After})
	if err != nil {
		return nil, err
	}
	r := chatRequest{Model: model, Temperature: 0, MaxTokens: maxAnswerTokens,
		Messages: []chatMessage{{Role: "system", Content: prompt}, {Role: "user", Content: string(user)}}}
	r.ResponseFormat.Type = "json_object"
	return marshal(r)
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// estimate is what a request is charged before its answer says what it
// used, and when the answer does not say: its bytes (a token is about four
// bytes of English; every byte counted, to stay on the safe side) and the
// longest answer it allows.
func estimate(body []byte) int { return len(body)/3 + maxAnswerTokens }

func (jd *judge) call(ctx context.Context, q Question) (Verdict, float64, string, error) {
	if jd.keyErr != "" {
		return "", 0, "", errors.New(jd.keyErr)
	}
	if err := checkEndpoint(jd.cfg.Endpoint); err != nil {
		return "", 0, "", err
	}
	body, err := Request(jd.cfg.Model, q)
	if err != nil {
		return "", 0, "", err
	}
	cost := estimate(body)
	if err := jd.reserve(cost); err != nil {
		return "", 0, "", err
	}
	used := cost
	defer func() { jd.settle(cost, used) }()

	timeout := jd.cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, jd.cfg.Endpoint, bytes.NewReader(body))
	if err != nil {
		return "", 0, "", errors.New("the endpoint is not a URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if jd.key != "" {
		req.Header.Set("Authorization", "Bearer "+jd.key)
	}
	resp, err := jd.client.Do(req)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return "", 0, "", fmt.Errorf("no answer within the timeout (%s)", timeout)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold a query
		}
		return "", 0, "", fmt.Errorf("the request failed: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return "", 0, "", fmt.Errorf("no answer within the timeout (%s)", timeout)
		}
		return "", 0, "", fmt.Errorf("reading the answer failed: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			hint = ": check the API key"
			if jd.cfg.APIKeyEnv != "" {
				hint += " in " + jd.cfg.APIKeyEnv
			} else {
				hint += " (the judge has no api_key_env)"
			}
		}
		return "", 0, "", fmt.Errorf("the endpoint answered HTTP %d%s", resp.StatusCode, hint)
	}
	if len(data) > MaxResponse {
		return "", 0, "", fmt.Errorf("the answer is larger than %d bytes", MaxResponse)
	}
	content, tokens, err := parseResponse(data)
	if tokens >= 0 {
		used = tokens
	}
	if err != nil {
		return "", 0, "", err
	}
	return ParseVerdict([]byte(content))
}

// parseResponse reads a chat-completions response: strict JSON, one choice
// whose message has a string content. tokens is usage.total_tokens, or -1
// when the response does not say.
func parseResponse(data []byte) (content string, tokens int, err error) {
	tokens = -1
	if err := strictjson.Check(data); err != nil {
		return "", tokens, fmt.Errorf("the response is not strict JSON: %v", err)
	}
	var r chatResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return "", tokens, errors.New("the response is not a chat completion")
	}
	if r.Usage != nil && r.Usage.TotalTokens != nil && *r.Usage.TotalTokens >= 0 && *r.Usage.TotalTokens < 1<<31 {
		tokens = int(*r.Usage.TotalTokens)
	}
	if len(r.Choices) != 1 {
		return "", tokens, fmt.Errorf("the response has %d choices, not 1", len(r.Choices))
	}
	if r.Choices[0].Message.Content == nil {
		return "", tokens, errors.New("the response's message has no content")
	}
	return *r.Choices[0].Message.Content, tokens, nil
}

// reserve takes cost tokens of the budget for a request about to be sent,
// or refuses when the budget cannot cover it: a spent budget sends nothing.
func (jd *judge) reserve(cost int) error {
	jd.mu.Lock()
	defer jd.mu.Unlock()
	budget := jd.cfg.BudgetTokens
	if budget <= 0 {
		budget = DefaultBudget
	}
	if jd.spent+jd.reserved+cost > budget {
		return fmt.Errorf("the token budget is spent (%d of budget_tokens = %d used, a request takes up to %d)", jd.spent, budget, cost)
	}
	jd.reserved += cost
	return nil
}

// settle replaces a request's reservation with what it used.
func (jd *judge) settle(reserved, used int) {
	jd.mu.Lock()
	defer jd.mu.Unlock()
	jd.reserved -= reserved
	jd.spent += used
}

// Spent is the tokens each judge used so far, by name.
func (j *Jury) Spent() map[string]int {
	out := map[string]int{}
	for _, jd := range j.judges {
		jd.mu.Lock()
		out[jd.cfg.Name] = jd.spent
		jd.mu.Unlock()
	}
	return out
}

// Defaults and bounds of a judge block (lang checks them).
const (
	DefaultTimeout = 30 * time.Second
	MaxTimeout     = 10 * time.Minute
	DefaultBudget  = 100_000
	MaxBudget      = 100_000_000
)

// checkEndpoint refuses an endpoint the configuration should not have let
// through: not https, and not plain http to a loopback host.
func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil {
		return errors.New("the endpoint is not an absolute URL without credentials")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		h := u.Hostname()
		if strings.EqualFold(h, "localhost") {
			return nil
		}
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			return nil
		}
	}
	return errors.New("the endpoint must be https (plain http only to a loopback host)")
}
