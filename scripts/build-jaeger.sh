#!/usr/bin/env bash
# Build Jaeger v2 (github.com/jaegertracing/jaeger/cmd/jaeger: a Collector distribution
# with the Jaeger query API and UI server, in-memory storage by default) from the Go module
# proxy, for the integration tests of the Jaeger walk-through (docs/jaeger.md).
#
# Usage: scripts/build-jaeger.sh        (prints the binary's path on its last line)
#
# deploy/tools/jaeger/go.mod names it as a `tool`, at v1.75.0, with every dependency
# pinned by its go.sum. Built once per machine into ~/.cache/otel-prov/engines/ (see
# scripts/engine-cache.sh): about 1 GiB of modules and 2 GiB of build cache, minutes on
# two cores; a second run builds nothing. Runs `go` under `nice`: the machine is shared.
#
# The Go module carries no built Jaeger UI (jaeger-ui is a separate JavaScript project,
# built by Jaeger's release process and not published to any registry reached here): the
# binary serves Jaeger's placeholder page where the UI would be, and the query API in full.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/deploy/tools/jaeger"
# shellcheck source=scripts/engine-cache.sh
source "$ROOT/scripts/engine-cache.sh"

command -v go >/dev/null 2>&1 || { echo "build-jaeger: ERROR: go not found on PATH" >&2; exit 1; }

build_jaeger() {
    local out="$1" version
    version="$(cd "$TOOLS" && go list -m -f '{{.Version}}' github.com/jaegertracing/jaeger)"
    go version
    echo "building github.com/jaegertracing/jaeger/cmd/jaeger@$version"
    cd "$TOOLS"
    nice go build -trimpath -mod=readonly \
        -ldflags "-s -w -X github.com/jaegertracing/jaeger/internal/version.latestVersion=$version" \
        -o "$out/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger
    "$out/jaeger" version
}

engine_build jaeger jaeger build_jaeger \
    "$TOOLS/go.mod" "$TOOLS/go.sum" "$ROOT/scripts/build-jaeger.sh" <(go version)
