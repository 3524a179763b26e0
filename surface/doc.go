// Package surface turns a server's live surface, as package mcp reads it,
// into the sealed lock entry it would be locked as. plan locks that entry,
// and run re-verifies a live server against its lock through the same
// conversion, so the two can never digest one surface two ways.
//
// It also reads a surface saved elsewhere (saved.go): the lists a server
// answered, as files, which verify -surface lays over the locked entry
// and checks as it checks a probe's, starting nothing.
package surface
