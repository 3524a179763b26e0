// Package image pins a container server's image (docker run, podman run)
// by its digest, so that run starts the image plan probed and no other.
//
//   - Parse recognises the engine's run argv (docker/podman [container]
//     run FLAGS… IMAGE ARGS…), knowing each run flag and whether it takes
//     a value (a flag it does not know is an error: it never guesses where
//     the image is), and parses IMAGE with go-containerregistry's name
//     rules.
//   - Resolve asks the image's registry which digest the reference names
//     today (a HEAD of the manifest, a GET when HEAD gives none), with the
//     credentials docker would use (authn.DefaultKeychain), over https
//     only, except for a registry on the loopback interface, which docker
//     also reaches over plain http. A reference that carries a digest is
//     pinned by it, without the network (docker ignores a tag beside a
//     digest, and so does the pin). For a multi-platform index the pin is
//     the index's digest, which is what docker run pulls.
//   - Argv is the argv run starts: the same argv with IMAGE written as
//     REPOSITORY@sha256:…, so the engine pulls and checks that content
//     whatever the tag now points to.
//
// It does not pin the engine (package pins pins the docker or podman
// executable like any command[0]), nor what the container reaches at run
// time. A digest names content, not a registry: an engine that resolves a
// short name through other registries (podman's registries.conf) still
// runs only that content.
//
// Its neighbours: plan calls Parse and Resolve, probes with Argv and
// records the pin in the lock (lock.Image); run checks the locked command
// still names the locked reference and starts Argv.
package image
