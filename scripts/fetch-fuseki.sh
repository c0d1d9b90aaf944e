#!/usr/bin/env bash
# Fetch Apache Jena Fuseki (org.apache.jena:jena-fuseki-server, the standalone server jar)
# from Maven Central, for the SPARQL delivery tests on Fuseki beside Oxigraph and Virtuoso.
#
# Usage: scripts/fetch-fuseki.sh        (prints the jar's path on its last line)
#
# Pinned by version and by the jar's SHA-256 below; 5.6.0 is the newest Jena for Java 17
# (6.x needs Java 21). Maven's dependency plugin (pinned too) copies it from ~/.m2 (which
# it fills once) into ~/.cache/otel-prov/engines/ (scripts/engine-cache.sh); a second run
# fetches nothing. tests/servers.py runs it on a TDB2 dataset that takes updates:
#   java -jar JAR --tdb2 --loc DIR --update --localhost --port PORT /ds
set -euo pipefail

FUSEKI_VERSION="5.6.0"
FUSEKI_SHA256="d28c1eaf703122ee628895a460c20fa4aa60a892f435d403ea8c036f241da1f8"
DEPENDENCY_PLUGIN="org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/engine-cache.sh
source "$ROOT/scripts/engine-cache.sh"

for tool in mvn java; do
    command -v "$tool" >/dev/null 2>&1 || { echo "fetch-fuseki: ERROR: $tool not found on PATH" >&2; exit 1; }
done

JAR="jena-fuseki-server-$FUSEKI_VERSION.jar"

fetch_fuseki() {
    local out="$1"
    mvn -B -q "$DEPENDENCY_PLUGIN:copy" \
        "-Dartifact=org.apache.jena:jena-fuseki-server:$FUSEKI_VERSION" "-DoutputDirectory=$out"
    echo "$FUSEKI_SHA256  $out/$JAR" | sha256sum --check
    java -jar "$out/$JAR" --version
}

engine_build fuseki "$JAR" fetch_fuseki "$ROOT/scripts/fetch-fuseki.sh"
