#!/usr/bin/env bash
# Build the OpenTelemetry Collector that deploy/'s configurations name (otelcol-prov) with
# the OpenTelemetry Collector Builder, from the Go module proxy, for the integration tests
# that run those configurations.
#
# Usage: scripts/build-otelcol.sh        (prints the binary's path on its last line)
#
# deploy/tools/otelcol/: go.mod names the builder as a `tool` (pinned by go.sum);
# otelcol-builder.yaml is the builder's manifest (the components, at one release);
# distribution.go.sum pins the distribution's whole dependency graph: it is put beside the
# go.mod the builder generates, so `go mod tidy` checks every module against it, and a
# graph that comes out otherwise fails the build, with the difference. Built once per
# machine into ~/.cache/otel-prov/engines/ (scripts/engine-cache.sh); a second run builds
# nothing. Runs `go` under `nice`: the machine is shared.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/deploy/tools/otelcol"
MANIFEST="$TOOLS/otelcol-builder.yaml"
PINNED_SUM="$TOOLS/distribution.go.sum"
# shellcheck source=scripts/engine-cache.sh
source "$ROOT/scripts/engine-cache.sh"

command -v go >/dev/null 2>&1 || { echo "build-otelcol: ERROR: go not found on PATH" >&2; exit 1; }

build_otelcol() {
    local out="$1"
    go version
    (cd "$TOOLS" && nice go build -trimpath -mod=readonly -o "$out/builder" \
        go.opentelemetry.io/collector/cmd/builder)
    "$out/builder" version
    # The manifest's output_path (./otelcol-prov) is relative to the working directory.
    mkdir -p "$out/otelcol-prov"
    cp "$PINNED_SUM" "$out/otelcol-prov/go.sum"
    (cd "$out" && nice "$out/builder" --config "$MANIFEST" --skip-strict-versioning=false)
    if ! cmp -s "$PINNED_SUM" "$out/otelcol-prov/go.sum"; then
        diff -u "$PINNED_SUM" "$out/otelcol-prov/go.sum" || true
        echo "the builder resolved another dependency graph than $PINNED_SUM pins (above);" \
            "if otelcol-builder.yaml changed on purpose, copy $out/otelcol-prov/go.sum there"
        return 1
    fi
    rm "$out/builder"
    "$out/otelcol-prov/otelcol-prov" --version
}

engine_build otelcol otelcol-prov/otelcol-prov build_otelcol \
    "$MANIFEST" "$PINNED_SUM" "$TOOLS/go.mod" "$TOOLS/go.sum" "$ROOT/scripts/build-otelcol.sh" \
    <(go version)
