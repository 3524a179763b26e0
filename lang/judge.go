package lang

import (
	"fmt"
	"math/big"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Judge is one judge block of the root mcpform block: an OpenAI-compatible
// chat-completions endpoint asked whether a changed description or
// instructions text still means the same (package judge). Judges change
// how a plan grades a text change, never what the lock holds: they are
// not part of plan.ConfigDigest.
type Judge struct {
	// Name is the block's label.
	Name string
	// Endpoint is the chat-completions URL: https, or http only to a
	// loopback host; "/chat/completions" is added to a base URL that does
	// not end in it ("https://api.openai.com/v1").
	Endpoint string
	Model    string
	// APIKeyEnv names the environment variable that holds the API key
	// (sent as Authorization: Bearer); "" sends none. The key itself is
	// never in mcp.hcl, the plan or the lock.
	APIKeyEnv string
	// Timeout bounds each request (default 30s, at most 10m).
	Timeout time.Duration
	// BudgetTokens is how many tokens (the endpoint's usage.total_tokens)
	// the judge may use in one plan (default 100000).
	BudgetTokens int
}

// Bounds of a judge block; package judge has the same defaults.
const (
	defaultJudgeTimeout = 30 * time.Second
	maxJudgeTimeout     = 10 * time.Minute
	defaultJudgeBudget  = 100_000
	maxJudgeBudget      = 100_000_000
	maxJudges           = 16
)

var judgeSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "endpoint", Required: true},
		{Name: "model", Required: true},
		{Name: "api_key_env"},
		{Name: "timeout"},
		{Name: "budget_tokens"},
	},
}

// checkJudges decodes the judge blocks of mcpform blocks. Like the other
// settings they take only literals. Only the root configuration declares
// judges.
func checkJudges(blocks []*hcl.Block, isRoot bool) ([]Judge, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	var out []Judge
	seen := map[string]hcl.Range{}
	for _, b := range blocks {
		if !isRoot {
			diags = append(diags, errorAt(b.DefRange, "Judge declared in a module",
				"Only the root configuration's mcpform block declares judges: they grade the whole plan. Move the judge block to the root mcp.hcl."))
			continue
		}
		name := b.Labels[0]
		if d := checkName("judge", name, b.LabelRanges[0]); d != nil {
			diags = append(diags, d)
			continue
		}
		if prev, dup := seen[name]; dup {
			diags = append(diags, errorAt(b.LabelRanges[0], fmt.Sprintf("Duplicate judge %q", name),
				fmt.Sprintf("A judge named %q was already declared at %s. Judge names must be unique; rename or remove one.", name, rangeString(prev))))
			continue
		}
		seen[name] = b.DefRange
		if len(out) == maxJudges {
			diags = append(diags, errorAt(b.DefRange, "Too many judges",
				fmt.Sprintf("A jury has at most %d judges. Remove some.", maxJudges)))
			continue
		}
		content, cdiags := b.Body.Content(judgeSchema)
		diags = append(diags, cdiags...)
		if cdiags.HasErrors() {
			continue
		}
		j := Judge{Name: name, Timeout: defaultJudgeTimeout, BudgetTokens: defaultJudgeBudget}
		ok := true
		if v, vok, d := literalString(content.Attributes["endpoint"], "endpoint"); vok {
			var ed *hcl.Diagnostic
			if j.Endpoint, ed = checkEndpoint(content.Attributes["endpoint"], v); ed != nil {
				diags, ok = append(diags, ed), false
			}
		} else {
			diags, ok = append(diags, d...), false
		}
		if v, vok, d := literalString(content.Attributes["model"], "model"); !vok {
			diags, ok = append(diags, d...), false
		} else if strings.TrimSpace(v) == "" || len(v) > 256 {
			diags, ok = append(diags, errorAt(content.Attributes["model"].Expr.Range(), "Invalid model",
				"model names the model the endpoint runs, for example \"gpt-4o-mini\": a non-empty string of at most 256 bytes.")), false
		} else {
			j.Model = v
		}
		if a, has := content.Attributes["api_key_env"]; has {
			if v, vok, d := literalString(a, "api_key_env"); !vok {
				diags, ok = append(diags, d...), false
			} else if d := checkKeyEnv(a, v); d != nil {
				diags, ok = append(diags, d), false
			} else {
				j.APIKeyEnv = v
			}
		}
		if a, has := content.Attributes["timeout"]; has {
			v, vok, d := literalString(a, "timeout")
			diags = append(diags, d...)
			if vok {
				dur, err := time.ParseDuration(v)
				switch {
				case err != nil:
					diags, ok = append(diags, errorAt(a.Expr.Range(), "Invalid timeout",
						fmt.Sprintf("%q is not a duration; write a number with a unit, for example \"30s\" or \"2m\".", v))), false
				case dur <= 0 || dur > maxJudgeTimeout:
					diags, ok = append(diags, errorAt(a.Expr.Range(), "Invalid timeout",
						fmt.Sprintf("A judge's timeout must be more than 0 and at most %s; %q is not.", maxJudgeTimeout, v))), false
				default:
					j.Timeout = dur
				}
			} else {
				ok = false
			}
		}
		if a, has := content.Attributes["budget_tokens"]; has {
			n, d := literalCount(a, "budget_tokens", 1, maxJudgeBudget)
			if d != nil {
				diags, ok = append(diags, d), false
			} else {
				j.BudgetTokens = n
			}
		}
		if ok {
			out = append(out, j)
		}
	}
	return out, diags
}

// literalCount evaluates a literal whole number from lo to hi.
func literalCount(a *hcl.Attribute, what string, lo, hi int) (int, *hcl.Diagnostic) {
	bad := errorAt(a.Expr.Range(), "Invalid "+what,
		fmt.Sprintf("%s must be a whole number from %d to %d.", what, lo, hi))
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || !v.Type().Equals(cty.Number) {
		return 0, bad
	}
	f := v.AsBigFloat()
	if !f.IsInt() || f.Cmp(big.NewFloat(float64(lo))) < 0 || f.Cmp(big.NewFloat(float64(hi))) > 0 {
		return 0, bad
	}
	n, _ := f.Int64()
	return int(n), nil
}

// checkEndpoint checks a judge's endpoint as url is checked for a remote
// server (https, plain http only to a loopback host, no credentials in it)
// and returns the chat-completions URL. A detail never repeats the
// endpoint: it might hold a credential.
func checkEndpoint(a *hcl.Attribute, raw string) (string, *hcl.Diagnostic) {
	bad := func(detail string) (string, *hcl.Diagnostic) {
		return "", errorAt(a.Expr.Range(), "Invalid endpoint", detail)
	}
	const example = ` for example "https://api.openai.com/v1" or "http://127.0.0.1:8080/v1/chat/completions"`
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return bad("endpoint is not a URL; write the OpenAI-compatible chat-completions endpoint," + example + ".")
	case u.User != nil:
		return bad("endpoint must not hold a user name or password: give the judge its key through api_key_env = \"NAME\", which names the environment variable that holds it.")
	case u.Scheme != "https" && u.Scheme != "http":
		return bad("endpoint must be an absolute https:// URL (http only for a loopback host)," + example + ".")
	case u.Opaque != "" || u.Hostname() == "":
		return bad("endpoint needs a host," + example + ".")
	case u.Fragment != "" || strings.HasSuffix(raw, "#"):
		return bad("endpoint must not have a fragment (#…). Remove it.")
	case u.Scheme == "http" && !isLoopback(strings.ToLower(u.Hostname())):
		return bad(fmt.Sprintf("endpoint must use https: over http both texts and the API key cross the network in the clear. Write https://%s…; http is allowed only for a loopback host (localhost, 127.0.0.0/8, [::1]).", u.Host))
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if !strings.HasSuffix(u.Path, "/chat/completions") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/chat/completions"
		u.RawPath = ""
	}
	return u.String(), nil
}

// checkKeyEnv checks that api_key_env names an environment variable and
// is not the key itself. A detail never repeats a value that looks like a
// key.
func checkKeyEnv(a *hcl.Attribute, v string) *hcl.Diagnostic {
	detail := ""
	switch {
	case strings.Contains(v, "=") && envName.MatchString(v[:strings.IndexByte(v, '=')]):
		detail = fmt.Sprintf("api_key_env names the variable, not NAME=value: write %q and set its value in the environment mcpform runs in.", v[:strings.IndexByte(v, '=')])
	case looksLikeToken(v):
		detail = `api_key_env is the name of the environment variable that holds the API key, not the key: mcp.hcl is committed. Write the variable's name, for example api_key_env = "OPENAI_API_KEY", and set its value in the environment mcpform runs in.`
	case !envName.MatchString(v):
		detail = fmt.Sprintf("%q is not a valid environment variable name: use letters, digits and underscores, not starting with a digit.", v)
	default:
		return nil
	}
	return errorAt(a.Expr.Range(), "Invalid environment variable name", detail)
}
