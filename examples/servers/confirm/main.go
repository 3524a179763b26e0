package main

import (
	"context"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	server := mcp.NewServer(&mcp.Implementation{Name: "confirm", Version: "1.0.0"}, nil)
	server.AddTool(&mcp.Tool{
		Name:        "delete_all",
		Description: "Delete everything, once the user confirms.",
		InputSchema: map[string]any{"type": "object"},
	}, deleteAll)
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

// deleteAll asks the user once (the key "confirm"), and answers with what
// the user said when the retry brings it.
func deleteAll(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	answer, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult)
	if !ok {
		ask := &mcp.ElicitParams{
			Message:         "Delete everything?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"sure": map[string]any{"type": "boolean"}}},
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": ask}}, nil
	}
	if answer.Action != "accept" || answer.Content["sure"] != true {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "kept everything (" + answer.Action + ")"}}}, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted everything: the user was sure"}}}, nil
}
