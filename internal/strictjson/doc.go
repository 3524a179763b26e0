// Package strictjson checks that bytes are one JSON value that every parser
// reads the same way: valid RFC 8259 JSON, valid UTF-8, no object with the
// same key twice at any depth (compared after unescaping, so "\u006eame"
// duplicates "name"), and nesting no deeper than a limit.
//
// Go's encoding/json keeps the last of two duplicate keys while other parsers
// keep the first; a second "name" in a tool call or a lock item would let two
// readers disagree about what was reviewed. mcp.lock's loader and the proxy's
// message path both refuse such input through Check. It is a leaf package.
package strictjson
