package proxymodel

import "strings"

// JSON-RPC codes the model names.
const (
	CodeParse          = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
	CodeQuarantined    = -32002
)

// Tool is a locked tool as the model sees its schemas.
type Tool struct {
	// Required: the input schema requires an argument. Closed: it names
	// its properties and allows no others.
	Required, Closed bool
	// Output: the locked tool has an outputSchema (hostile.StructuredSchema),
	// which only the "structured" action's result satisfies.
	Output bool
}

// Prompt is a locked prompt: whether it has a required argument.
type Prompt struct{ Required bool }

// Server is one server of the session as locked.
type Server struct {
	Name      string
	Tools     map[string]Tool
	Prompts   map[string]Prompt
	Resources map[string]bool // locked URIs, and URIs matching a locked template
	// Sources and Sinks are policy.taint ("resources:*" for every
	// resources/read).
	Sources, Sinks map[string]bool
	// ServerRequests are the server→client request methods the lock's
	// client capabilities allow.
	ServerRequests map[string]bool
	// Lists are the list methods its locked capabilities offer.
	Lists map[string]bool
	// Modern: the server is locked in the 2026-07-28 era.
	Modern bool
	// Subscribe, Completions, Logging are locked capabilities.
	Subscribe, Completions, Logging bool
	// Hidden are the locked tools policy.expose leaves out: refused as
	// tools the lock does not hold, and in no list.
	Hidden map[string]bool
	// BlockChanged is on_drift = "block-changed": drift blocks the tools
	// that drifted instead of quarantining the server.
	BlockChanged bool
}

// Frame says how a client message is framed.
type Frame int

const (
	FrameOK            Frame = iota
	FrameGarbage             // not JSON
	FrameHuge                // over the line limit
	FrameBatch               // a JSON array
	FrameDupKey              // a key twice in one object
	FrameUnknownTop          // a wrong-case or unknown top-level member ("Method")
	FrameNullID              // a request with a null id
	FrameStrayResponse       // a response to a request nobody sent the client
)

// Args classifies a call's arguments against the locked schema.
type Args int

const (
	ArgsGood      Args = iota
	ArgsAbsent         // no "arguments" member
	ArgsBadType        // a value the schema refuses
	ArgsExtra          // an argument the schema does not name
	ArgsMissing        // a required argument left out
	ArgsNotObject      // arguments that are not an object
	ArgsCaseTwin       // a second key differing only in case from one the schema names
)

// Params classifies the params object of a request.
type Params int

const (
	ParamsGood          Params = iota
	ParamsNameWrongCase        // "Name" instead of "name"
	ParamsCaseSmuggle          // "name" plus a wrong-case twin naming another item
	ParamsArgsWrongCase        // "Arguments" instead of "arguments"
)

// Answer is the client's answer to the proxy's approval request.
type Answer int

const (
	AnswerAccept Answer = iota
	AnswerDecline
)

// Msg is one client message.
type Msg struct {
	Server string
	Frame  Frame
	// Notification: no id.
	Notification bool
	Method       string
	Item         string // tool or prompt name, resource URI
	Args         Args
	Params       Params
	// Retry is a 2026-07-28 retry carrying the proxy's requestState and
	// the user's Answer.
	Retry  bool
	Answer Answer
}

// Class is what must happen to a client message.
type Class int

const (
	None        Class = iota // no answer (a notification)
	Local                    // answered by the proxy from the lock
	Forward                  // sent to the server; its answer comes back
	Refuse                   // a JSON-RPC error with Code
	ToolRefuse               // a tools/call result with isError, from mcpform; not forwarded
	Quarantined              // -32002
	Ask                      // the user is asked (legacy: elicitation/create; modern: input_required)
	Gone                     // the server exited: -32603
	Withheld                 // the server's result broke the locked outputSchema: a tool error from mcpform in its place
)

var classNames = [...]string{"none", "local", "forward", "refuse", "tool-refuse", "quarantined", "ask", "gone", "withheld"}

func (c Class) String() string { return classNames[c] }

// Verdict is the model's answer for one client message. For an Ask,
// After is what happens once the user answered (legacy), when the answer
// is known.
type Verdict struct {
	Class Class
	Code  int
	After *Verdict
}

// State is what the model remembers of a session.
type State struct {
	Modern      bool            // the client speaks 2026-07-28
	ClientCaps  map[string]bool // declared client capabilities (elicitation, roots, sampling)
	Tainted     bool
	Quarantined map[string]bool
	Exited      map[string]bool
	// LiveDrifted: the server's live surface no longer matches the lock
	// (whether or not it said so).
	LiveDrifted map[string]bool
	// Blocked are the tools of a block-changed server refused since they
	// drifted.
	Blocked map[string]map[string]bool
}

// Model is the reference: the servers of one client session and its state.
type Model struct {
	Servers map[string]*Server
	State   State
}

// New returns a model of a fresh session.
func New(modern bool, clientCaps map[string]bool, servers ...*Server) *Model {
	m := &Model{Servers: map[string]*Server{}, State: State{Modern: modern, ClientCaps: clientCaps, Quarantined: map[string]bool{}, Exited: map[string]bool{}, LiveDrifted: map[string]bool{}, Blocked: map[string]map[string]bool{}}}
	for _, s := range servers {
		m.Servers[s.Name] = s
	}
	return m
}

var lockAnswered = map[string]bool{
	"initialize": true, "server/discover": true,
	"tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true,
}

// Client says what must happen to msg. When the answer is Ask and answer
// is given (legacy), After says what happens once the user answered.
// Client does not change the state: Observe does, with what the server
// did.
func (m *Model) Client(msg Msg, answer Answer) Verdict {
	switch msg.Frame {
	case FrameGarbage, FrameDupKey:
		return Verdict{Class: Refuse, Code: CodeParse}
	case FrameHuge, FrameBatch, FrameUnknownTop, FrameNullID:
		return Verdict{Class: Refuse, Code: CodeInvalidRequest}
	case FrameStrayResponse:
		return Verdict{Class: None} // dropped: it answers nothing
	}
	if msg.Notification {
		return Verdict{Class: None}
	}
	s := m.Servers[msg.Server]
	if msg.Method == "ping" {
		return Verdict{Class: Local} // answered before anything else, even in quarantine
	}
	// Deny by default for a server that drifted: every request, local or
	// not, is refused.
	if m.State.Quarantined[s.Name] {
		return Verdict{Class: Quarantined, Code: CodeQuarantined}
	}
	// A block-changed server's drifted tools are refused with the
	// quarantine's code, before enforce: a call that names one (its
	// "name" member found) is refused whatever else it carries. A hidden
	// tool is not told of.
	if msg.Method == "tools/call" && msg.Params != ParamsNameWrongCase && m.State.Blocked[s.Name][msg.Item] && !s.Hidden[msg.Item] {
		return Verdict{Class: Quarantined, Code: CodeQuarantined}
	}
	// The taint gate comes after enforce: only a call that would be
	// forwarded can need approval, and a sink call in a tainted session
	// does.
	v := m.enforce(s, msg)
	if v.Class != Forward || !m.isSink(s, msg) || !m.State.Tainted {
		return v
	}
	if !m.State.ClientCaps["elicitation"] {
		return Verdict{Class: ToolRefuse}
	}
	if m.State.Modern {
		if !msg.Retry {
			return Verdict{Class: Ask}
		}
		if msg.Answer != AnswerAccept {
			return Verdict{Class: ToolRefuse}
		}
		return v
	}
	after := Verdict{Class: ToolRefuse}
	if answer == AnswerAccept {
		after = v
	}
	return Verdict{Class: Ask, After: &after}
}

// ContinuationAsked reports whether the retry that answers a server
// request carried in msg's result (2026-07-28) is asked about again: it
// continues a sink call in a tainted session, and the answers it carries
// reach the server as part of that call.
func (m *Model) ContinuationAsked(msg Msg) bool {
	return m.State.Modern && m.State.Tainted && m.State.ClientCaps["elicitation"] && m.isSink(m.Servers[msg.Server], msg)
}

func (m *Model) isSink(s *Server, msg Msg) bool {
	return msg.Method == "tools/call" && msg.Params != ParamsNameWrongCase && s.Sinks[msg.Item]
}

// IsSource reports whether an answered msg taints the session.
func (m *Model) IsSource(msg Msg) bool {
	s := m.Servers[msg.Server]
	switch msg.Method {
	case "tools/call":
		return msg.Params != ParamsNameWrongCase && s.Sources[msg.Item]
	case "resources/read":
		return s.Sources["resources:*"]
	case "prompts/get":
		return s.Sources["prompts:*"]
	}
	return false
}

// enforce is the lock's part: only locked items, arguments as the locked
// schema says, no smuggled keys, unknown methods refused.
func (m *Model) enforce(s *Server, msg Msg) Verdict {
	refuse := func(code int) Verdict { return Verdict{Class: Refuse, Code: code} }
	if lockAnswered[msg.Method] {
		if strings.HasSuffix(msg.Method, "/list") && !s.Lists[msg.Method] {
			return refuse(CodeMethodNotFound)
		}
		return Verdict{Class: Local}
	}
	switch msg.Method {
	case "tools/call":
		if msg.Params != ParamsGood {
			return refuse(CodeInvalidParams)
		}
		t, ok := s.Tools[msg.Item]
		if !ok || s.Hidden[msg.Item] {
			return refuse(CodeInvalidParams) // a hidden tool is refused as an unlocked one
		}
		switch msg.Args {
		case ArgsNotObject, ArgsBadType, ArgsCaseTwin:
			return Verdict{Class: ToolRefuse}
		case ArgsExtra:
			if t.Closed {
				return Verdict{Class: ToolRefuse}
			}
		case ArgsMissing, ArgsAbsent:
			if t.Required {
				return Verdict{Class: ToolRefuse}
			}
		}
		return m.forward(s)
	case "prompts/get":
		if msg.Params != ParamsGood {
			return refuse(CodeInvalidParams)
		}
		p, ok := s.Prompts[msg.Item]
		if !ok {
			return refuse(CodeInvalidParams)
		}
		switch msg.Args {
		case ArgsNotObject, ArgsBadType, ArgsExtra, ArgsCaseTwin:
			return refuse(CodeInvalidParams)
		case ArgsMissing, ArgsAbsent:
			if p.Required {
				return refuse(CodeInvalidParams)
			}
		}
		return m.forward(s)
	case "resources/read":
		if msg.Params != ParamsGood || !s.Resources[msg.Item] {
			return refuse(CodeInvalidParams)
		}
		return m.forward(s)
	case "resources/subscribe":
		if !s.Subscribe {
			return refuse(CodeMethodNotFound)
		}
	case "completion/complete":
		if !s.Completions {
			return refuse(CodeMethodNotFound)
		}
	case "logging/setLevel":
		if !s.Logging {
			return refuse(CodeMethodNotFound)
		}
	}
	return refuse(CodeMethodNotFound)
}

func (m *Model) forward(s *Server) Verdict {
	return Verdict{Class: Forward}
}

// Act is what the server did while answering a forwarded call (its
// hostile.Action).
type Act struct {
	Do     string
	Method string // for srvreq
}

// ServerVerdict says what must happen to what the server did.
type ServerVerdict struct {
	// Call is what the client gets for the call: Forward (the server's
	// answer), Gone, or Refuse with Code.
	Call Class
	Code int
	// Input: the client got the server's own input_required result.
	Input bool
	// Request is set for a server→client request: Passed says the client
	// sees it (as a request of its own for a legacy client, in the call's
	// input_required result for a 2026-07-28 one); otherwise the proxy
	// answers the server with an error. Retries is how many more times
	// the server gets the call (a 2026-07-28 server's input_required that
	// a legacy client answered).
	Request, Passed bool
	Retries         int
	// QuarantineAfter: every later request to this server is refused.
	QuarantineAfter bool
}

// Server says what must happen to act, done while the server answers msg,
// a forwarded call, and updates the state. Garbage, smuggled keys, wrong or
// repeated ids and over-long lines never reach the client (the proxy drops
// them, and the real answer that follows is passed on). The answer to a
// tools/call of a tool with a locked outputSchema is withheld unless it is
// a tool error or carries structuredContent that satisfies the schema.
func (m *Model) Server(msg Msg, act Act) ServerVerdict {
	server := msg.Server
	s := m.Servers[server]
	v := ServerVerdict{Call: Forward}
	switch act.Do {
	case "exit":
		m.State.Exited[server] = true
		v.Call = Gone
	case "dupkeys", "casekeys", "huge":
		// An answer the proxy refuses (duplicate keys, a wrong-case
		// member, a line over the cap) that names the call's id ends
		// the call at once with -32603, instead of at its timeout.
		v.Call, v.Code = Refuse, CodeInternal
	case "srvreq":
		// A request on the wire: relayed to a legacy client as it is, to
		// a 2026-07-28 client in the call's input_required result (only
		// from a legacy server: a 2026-07-28 one has no wire requests).
		v.Request = true
		v.Passed = m.allowed(s, act.Method) && !(m.State.Modern && s.Modern)
	case "mrtr":
		// A 2026-07-28 server asks in its result (input_required), under
		// the same rule: a 2026-07-28 client gets that result; a legacy
		// one the request, after which the call is retried upstream.
		if !s.Modern {
			break
		}
		switch {
		case !m.allowed(s, act.Method):
			v.Call, v.Code = Refuse, CodeInternal
		case m.State.Modern:
			v.Input = true
		default:
			v.Request, v.Passed, v.Retries = true, true, 1
		}
	case "drift":
		// Definitional drift on list_changed: quarantine (or, for a
		// block-changed server, block what drifted) before the answer to
		// the next request.
		m.State.LiveDrifted[server] = true
		m.drifted(s, &v)
	case "nodrift":
		// list_changed is checked against the lock, not against the last
		// listing: an earlier silent change is found now.
		if m.State.LiveDrifted[server] {
			m.drifted(s, &v)
		}
	case "silentdrift":
		// Unannounced: the proxy cannot know, but serves the locked lists
		// and refuses what is not locked, so nothing changes for the
		// client.
		m.State.LiveDrifted[server] = true
	}
	if v.Call == Forward && !v.Input && msg.Method == "tools/call" && s.Tools[msg.Item].Output {
		// What the answer is once the requests are over: only a
		// structured result satisfies the schema; every other action
		// ends in a result without structuredContent, or a wrong one
		// (badoutput). A tool error passes as it is.
		switch act.Do {
		case "structured", "toolerror":
		default:
			v.Call = Withheld
		}
	}
	return v
}

// drifted is what found drift does: the drifted list (hostile's Drifted)
// replaces every locked tool, so each is changed or removed. A
// block-changed server has them all blocked and keeps its prompts and
// resources; any other is quarantined.
func (m *Model) drifted(s *Server, v *ServerVerdict) {
	if s.BlockChanged {
		b := map[string]bool{}
		for name := range s.Tools {
			b[name] = true
		}
		m.State.Blocked[s.Name] = b
		return
	}
	v.QuarantineAfter = true
	m.State.Quarantined[s.Name] = true
}

// Listed reports whether the locked tool name is in the tools/list the
// client gets: not hidden by expose, not blocked.
func (m *Model) Listed(server, name string) bool {
	s := m.Servers[server]
	return !s.Hidden[name] && !m.State.Blocked[server][name]
}

// allowed reports whether a server→client request passes: the lock's
// client capabilities allow it, the client declared it, and the server is
// not quarantined.
func (m *Model) allowed(s *Server, method string) bool {
	need := map[string]string{"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}[method]
	return need != "" && s.ServerRequests[method] && m.State.ClientCaps[need] && !m.State.Quarantined[s.Name]
}

// Answered records that msg got v (after any approval), so a source result
// taints the session: any answer of the server's to a source call that is
// not a JSON-RPC error counts, a tool error included (the proxy cannot tell
// whether the source's text is in it), and so does a result withheld for
// breaking the locked outputSchema (the tool error in its place quotes the
// first violation, and with it the source's data); mcpform's own refusals
// of a call do not.
func (m *Model) Answered(msg Msg, v Verdict) {
	if (v.Class == Forward || v.Class == Withheld) && m.IsSource(msg) {
		m.State.Tainted = true
	}
}
