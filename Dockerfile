# syntax=docker/dockerfile:1
#
# mcpform for CI: one static binary on distroless/static, run as a non-root
# user. It holds mcpform alone: validate, fmt -check, show, audit verify and
# client-config run as they are; plan and verify start your servers, so they
# need the servers' runtimes (node for npx, uv for uvx, ...): copy mcpform
# into an image that has them instead,
#
#   COPY --from=ghcr.io/mcpform/mcpform:0.1.0 /mcpform /usr/local/bin/mcpform
#
# Build (multi-platform with buildx; VERSION, COMMIT and DATE are the build
# stamp `mcpform version` reports, since .git is not sent to the builder):
#
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg VERSION=0.1.0 --build-arg COMMIT="$(git rev-parse HEAD)" \
#     --build-arg DATE="$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd)" \
#     -t ghcr.io/mcpform/mcpform:0.1.0 .
#
# Run in a checkout (the files it writes belong to the user you pass):
#
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD:/work" ghcr.io/mcpform/mcpform:0.1.0 validate

ARG GO_VERSION=1.26.8

# The build stage runs on the builder's own platform and cross-compiles, as
# scripts/release.sh does: the same flags (CGO_ENABLED=0, -trimpath, the
# ldflags), held together by cmd/mcpform's TestDockerfile.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=""
ARG COMMIT=""
ARG DATE=""
RUN GOOS="$TARGETOS" GOARCH="$TARGETARCH" MCPFORM_COMMIT="$COMMIT" MCPFORM_DATE="$DATE" \
    bash scripts/release.sh -binary /out/mcpform ${VERSION:+-version "$VERSION"}

# distroless/static: no shell, no libc, CA certificates and a passwd with the
# nonroot user (65532), which the :nonroot tag runs as.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcpform /mcpform
USER 65532:65532
WORKDIR /work
ENTRYPOINT ["/mcpform"]
CMD ["help"]
