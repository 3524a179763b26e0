// Package surface turns a server's live surface, as package mcp reads it,
// into the sealed lock entry it would be locked as. plan locks that entry,
// and run re-verifies a live server against its lock through the same
// conversion, so the two can never digest one surface two ways.
package surface
