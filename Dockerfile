# clawhost in a container: the release's static binaries (built by make
# dist's builder, core/cmd/dist), Debian's Node.js and the claude CLI at the
# version clawhost is tested with. See docs/install.md.
#
#   docker build -t clawhost .
#   docker run -d --name clawhost -e TELEGRAM_BOT_TOKEN=... -e ANTHROPIC_API_KEY=... \
#     -v clawhost-data:/data -v clawhost-workspace:/workspace clawhost
#
# Your own configuration: -v /path/to/config.hcl:/etc/clawhost/config.hcl:ro.

# The builder runs on the build machine's platform and cross-compiles for
# the image's (TARGETARCH): the binaries are static Go, no cgo.
FROM --platform=$BUILDPLATFORM golang:1.26-bookworm AS build
ARG TARGETARCH
WORKDIR /src
COPY go.work go.work.sum go.mod go.sum ./
COPY sdk/go.mod sdk/go.sum ./sdk/
COPY proto/go.mod proto/go.sum ./proto/
RUN go mod download
# The whole checkout, .git included: the builder stamps the version, commit
# and date from git (.dockerignore leaves out only untracked build output).
COPY . .
RUN go run ./core/cmd/dist -platforms linux/${TARGETARCH} -out /dist \
 && mkdir /out && tar -xzf /dist/clawhost_*_linux_${TARGETARCH}.tar.gz -C /out --strip-components=1

FROM debian:bookworm-slim
# The claude CLI clawhost is tested with (make claude-cli installs the same).
ARG CLAUDE_VERSION=2.1.330
# nodejs runs claude; git for agents with worktrees; bubblewrap is claude's
# sandbox (agent.sandbox = "auto"), which needs user namespaces the
# container runtime may not allow — then clawhost starts only while nobody
# but the owners can reach the agent, unless -e CLAWHOST_SANDBOX=off accepts
# the container as the only boundary. npm is needed only for the install.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates nodejs npm git bubblewrap tini \
 && npm install -g --no-audit --no-fund @anthropic-ai/claude-code@${CLAUDE_VERSION} \
 && npm cache clean --force \
 && apt-get purge -y --auto-remove npm \
 && rm -rf /var/lib/apt/lists/* \
 && claude --version
COPY --from=build /out/clawhost /out/clawhost-* /usr/local/lib/clawhost/
COPY --from=build /out/LICENSE /out/README.md /out/CHANGELOG.md /usr/share/doc/clawhost/
COPY examples/docker/config.hcl /etc/clawhost/config.hcl
# clawhost finds its plugins beside its real file (the symlink is resolved).
# /claude is for claude's session files when several hosts share them
# (examples/compose): a volume mounted there starts owned by clawhost.
RUN ln -s /usr/local/lib/clawhost/clawhost /usr/local/bin/clawhost \
 && useradd --system --uid 10001 --create-home --home-dir /home/clawhost --shell /usr/sbin/nologin clawhost \
 && mkdir -p /data /workspace /claude \
 && chown clawhost:clawhost /data /workspace /claude \
 && chmod 0700 /data /claude
USER clawhost
ENV HOME=/home/clawhost
# The status page (admin { listen } in examples/docker/config.hcl: port 8791 of the
# container, token-protected; publish it on the host's loopback with
# -p 127.0.0.1:8791:8791). /healthz answers 200 when every enabled plugin is ready and one is a channel:
# a container started without a channel's token is unhealthy, saying so.
EXPOSE 8791
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["clawhost", "healthcheck", "-config", "/etc/clawhost/config.hcl"]
VOLUME ["/data", "/workspace"]
WORKDIR /workspace
ENTRYPOINT ["/usr/bin/tini", "--", "clawhost"]
CMD ["-config", "/etc/clawhost/config.hcl"]
