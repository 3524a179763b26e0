package main

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	server := mcp.NewServer(&mcp.Implementation{Name: "roots", Version: "1.0.0"}, nil)
	server.AddTool(&mcp.Tool{
		Name:        "where_am_i",
		Description: "Name the client's roots.",
		InputSchema: map[string]any{"type": "object"},
	}, whereAmI)
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

// whereAmI asks for the client's roots once (the key "roots"), and answers
// with them when the retry brings them.
func whereAmI(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	answer, ok := req.Params.InputResponses["roots"].(*mcp.ListRootsResult)
	if !ok {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}}, nil
	}
	var uris []string
	for _, r := range answer.Roots {
		uris = append(uris, r.URI)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("roots: %s", strings.Join(uris, ", "))}}}, nil
}
