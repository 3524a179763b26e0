"""A tiny MCP stdio server for mcpform's PyPI tests (standard library only)."""
