package main

import "github.com/mcpform/mcpform/internal/fakemcp"

// fakemcp is the scriptable fake server (internal/fakemcp): scripts use it
// as a server's command to show what real servers cannot.
func init() { testCommands["fakemcp"] = fakemcp.Main }
