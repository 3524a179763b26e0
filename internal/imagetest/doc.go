// Package imagetest serves an OCI registry inside a test process, for the
// tests of container servers: no container engine runs where mcpform is
// tested, and the registry protocol is what pins/image speaks. The
// registry is go-containerregistry's in-memory implementation (the real
// protocol: HEAD and GET of manifests, pushes by remote.Write), on
// 127.0.0.1 over plain http, which pins/image allows for loopback only.
//
// Its neighbours: the tests of pins/image, plan and cmd/mcpform push
// images with Push and resolve their tags through it.
package imagetest
