// Package pypitest gives the PyPI tests what no index here serves: real
// wheels of a tiny MCP server written in Python with the standard library
// only (testdata/mcpform-hello-mcp, which depends on
// testdata/mcpform-hello-dep, so its tree has two packages), written as
// wheel files with archive/zip (a wheel is a zip with a dist-info:
// METADATA, WHEEL, entry_points.txt, RECORD), which the real pip installs
// from a find-links directory; and an sdist-only package. It also decides
// what a test that needs python3 with venv and pip does when they are
// absent: it skips, saying how to get them, or under CI (CI=true), where
// the test command (scripts/test.sh) has installed them, it fails.
package pypitest
