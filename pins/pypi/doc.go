// Package pypi pins a PyPI package runner's server (uvx, uv tool run, pipx
// run) by its whole dependency tree, installs exactly that tree into a
// content-addressed cache, and checks the installed tree before each
// start, so that run starts the pinned code with no index at all. It is
// pins/npm's sibling and has its shape.
//
//   - Parse recognises the runner's argv and its requirement (PEP 508
//     names, normalised as PEP 503 says; index packages only; name==exact
//     version, else a *NotExactError saying how to pin it).
//   - Resolve has the real pip resolve the whole tree without installing
//     or running anything (pip install --dry-run --only-binary=:all:
//     --report), from the index pip is configured with; every package
//     must be a wheel (an sdist runs its build code to install) with a
//     sha256. It writes the tree as a canonical requirements.txt
//     (name==version --hash=sha256:…, sorted: pip's --require-hashes
//     form) into a directory the caller chooses; the Pin names it by its
//     SHA-256.
//   - CheckRequirements is the one parser of that file, which is stored
//     beside the lock and so is untrusted input: canonical lines only,
//     within MaxRequirementsBytes and MaxPackages.
//   - Install creates a venv (python3 -m venv --without-pip) at its final
//     path cacheRoot/<requirements digest>/tree, under a lock (a venv is
//     not relocatable, so it cannot be built aside and renamed), installs
//     the file into it with pip --require-hashes --no-deps
//     --only-binary=:all: (pip checks each wheel's sha256), checks each
//     installed distribution's name and version, picks the console script
//     from the top package's entry points, records a manifest of every
//     file's SHA-256 (within MaxFiles and MaxTreeBytes) and writes the
//     manifest last: an entry without one is incomplete, and the next
//     Install removes it and starts again.
//   - Verify compares the entry with its manifest before each start,
//     hashing only files whose pins.StatKey changed since they last
//     matched.
//   - Argv is what run starts: the venv's python with -I -S -B -c and a
//     fixed launcher that imports the console script's entry point and
//     calls it (see Argv for why not the script file).
//
// Links: every link of the tree must stay inside it, except the venv's
// interpreter links (bin/python, bin/python3, bin/python3.N), which may
// point to the absolute base interpreter that created the venv; the
// manifest records each target and Verify checks it, and the pins package
// pins the interpreter's real file by digest.
//
// No package's code runs at resolve or install time: wheels only, no
// build step. The cache directory is trusted as pins/npm's is: whoever
// can write it can rewrite a manifest.
//
// Its neighbours: plan calls Parse, Resolve and Install (it probes the
// server from the cache) and records the Pin in the lock; mcpform install
// calls Install; run calls Verify and starts Argv. It runs the python3 on
// PATH and its pip, and reads the index pip is configured with
// (PIP_INDEX_URL, pip.conf).
package pypi
