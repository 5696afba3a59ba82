# syntax=docker/dockerfile:1.7
#
# The one image of the fleet: `eligibility evaluator | explainer | migrate | topics create` (the Helm chart
# and k8s/ manifests pass the subcommand as arguments). Multi-stage: a Rust build stage, then a slim
# runtime with only the shared libraries the binary links, the rule corpus and a non-root user.
#
#   docker build -t eligibility:dev .
#   GPU pool image (cargo feature `gpu`; libcuda itself is injected by the NVIDIA container toolkit):
#   docker build --build-arg CARGO_FEATURES=gpu --build-arg RUNTIME_BASE=<nvidia/cuda *-runtime image> -t eligibility:gpu .
#
# This Dockerfile has not been built in the environment it was written in (no Docker engine there):
# see docs/deploy.md.

ARG RUST_VERSION=1.95
ARG RUNTIME_BASE=debian:bookworm-slim

FROM rust:${RUST_VERSION}-bookworm AS build
# librdkafka is built from source by the rdkafka crate (cmake/make), against OpenSSL, zlib and zstd.
RUN apt-get update \
 && apt-get install -y --no-install-recommends cmake pkg-config libssl-dev zlib1g-dev libzstd-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
ARG CARGO_FEATURES=""
# The target directory is a cache mount (kept between builds), so the binary is copied out in the same
# step. --locked: the build uses exactly Cargo.lock.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/usr/local/cargo/git \
    --mount=type=cache,target=/src/target \
    cargo build --release -p eligibility --locked ${CARGO_FEATURES:+--features "$CARGO_FEATURES"} \
 && install -D -m 0755 target/release/eligibility /out/eligibility

FROM ${RUNTIME_BASE} AS runtime
# Runtime libraries of the build above, and the CA bundle used for TLS when no CA file is configured.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates libssl3 zlib1g libzstd1 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 65532 eligibility \
 && useradd --system --uid 65532 --gid 65532 --home-dir /app --no-create-home --shell /usr/sbin/nologin eligibility
COPY --from=build /out/eligibility /usr/local/bin/eligibility
# The bundled rule corpus and the schemas (field catalogue, partition map, Avro schemas), read-only.
COPY --chown=root:root schemes/ /app/schemes/
COPY --chown=root:root schemas/ /app/schemas/
WORKDIR /app
ENV ELIGIBILITY_RULES_DIR=/app/schemes \
    ELIGIBILITY_HTTP_ADDR=0.0.0.0:9464
# Numeric user so that Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
USER 65532:65532
EXPOSE 9464
ENTRYPOINT ["/usr/local/bin/eligibility"]
CMD ["evaluator"]
