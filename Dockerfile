# Rewind game server image: one static binary on an empty base.
#
#   docker build -t rewind:dev \
#     --build-arg VERSION="$(git describe --tags --always --dirty)" \
#     --build-arg REVISION="$(git rev-parse HEAD)" .
#   docker run --rm -p 4433:4433/udp -p 9090:9090 \
#     -e REWIND_LISTEN=0.0.0.0:4433 -e REWIND_ADMIN__LISTEN=0.0.0.0:9090 \
#     -v "$PWD/keys:/etc/rewind/keys:ro" -e REWIND_AUTH__PUBLIC_KEYS=/etc/rewind/keys/matchmaker.pub \
#     rewind:dev
#
# docs/deploy.md walks through the rest (keys, config, Agones). The build
# command below is checked by cmd/rewind/deploy_test.go, which runs it and
# checks that the binary is static: keep the two in step.

# The build stage. A tag, not a digest: pin the digest in your own registry
# if you need reproducible images.
FROM golang:1.26 AS build
WORKDIR /src
# Modules first, in a layer of their own: it is rebuilt only when go.mod or
# go.sum change, not on every source edit.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# What rewind version prints and rewind_build_info says. The build context
# has no .git (.dockerignore), so Go cannot stamp the revision itself: the
# build passes both (the docker build line above). Unset, the version reads
# "(devel)" and the revision "unknown". Declared after COPY, so that a new
# revision does not rebuild the module layer.
ARG VERSION=""
ARG REVISION=""
# CGO_ENABLED=0: a static binary (no libc, no dynamic loader), so it runs on
# the empty base below. -trimpath drops local paths; -s -w drop the symbol
# table and DWARF (panics still print file:line); -X sets the two above.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/rewind-gg/rewind/internal/buildinfo.version=${VERSION} -X github.com/rewind-gg/rewind/internal/buildinfo.revision=${REVISION}" -o /out/rewind ./cmd/rewind

# The run stage: nothing but the binary. No shell, no package manager, no
# libc, no /etc/passwd (so the user is numeric), no CA roots (the server
# needs none: it verifies Ed25519 tokens, not TLS peers).
FROM scratch
COPY --from=build /out/rewind /rewind
# A fixed non-root UID:GID (distroless's "nonroot"), so Kubernetes'
# runAsNonRoot can check it. The server writes nothing to the image: its
# only file is the results file (results.file), on a mounted volume.
USER 65532:65532
# 4433/udp: QUIC (listen). 9090/tcp: the admin port (admin.listen):
# /metrics, /healthz, /readyz, /rooms. The defaults bind both to 127.0.0.1:
# set REWIND_LISTEN=0.0.0.0:4433 and REWIND_ADMIN__LISTEN=0.0.0.0:9090.
EXPOSE 4433/udp 9090/tcp
# Configuration comes from REWIND_* variables and/or a mounted file
# (serve --config /etc/rewind/rewind.toml); see docs/running.md.
ENTRYPOINT ["/rewind"]
CMD ["serve"]
