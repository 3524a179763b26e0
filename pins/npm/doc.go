// Package npm pins an npm package runner's server (npx, npm exec, pnpm
// dlx, bunx) by its whole dependency tree, installs exactly that tree
// into a content-addressed cache, and checks the installed tree before
// each start, so that run starts the pinned code with no registry at all.
//
//   - Parse recognises the runner's argv and its package spec (npm's name
//     rules; registry packages only; an exact version, else a
//     *NotExactError that Latest can complete with today's version).
//   - Resolve reads the version's manifest from the registry (SRI sha512
//     integrity required), has the real npm generate the tree's v3
//     lockfile without installing or running anything, checks it
//     (CheckLockfile: every package from the registry, with sha512
//     integrity, within MaxLockfileBytes and MaxPackages) and writes it,
//     canonical, into a directory the caller chooses; the Pin names it by
//     its SHA-256.
//   - Install runs npm ci --ignore-scripts from that lockfile into
//     cacheRoot/<lockfile digest>/ (npm checks each tarball's integrity),
//     checks each installed package's name and version, records a
//     manifest of every file's SHA-256 (within MaxFiles and MaxTreeBytes,
//     no link out of the tree) and renames the entry into place once.
//   - Verify compares the entry with its manifest before each start,
//     hashing only files whose device, inode, size, mtime or ctime
//     changed since they last matched.
//
// Lifecycle scripts never run; the packages that have them are listed in
// the Pin for the plan to report. The cache directory is trusted as the
// pins package's is: whoever can write it can rewrite a manifest.
//
// Its neighbours: plan calls Parse and Resolve and records the Pin in the
// lock; mcpform install calls Install; run calls Verify and starts node
// with the bin file. It runs the npm on PATH and reads the registry npm
// is configured with (npm_config_registry, .npmrc).
package npm
