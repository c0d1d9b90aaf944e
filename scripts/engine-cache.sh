# Shared by scripts/build-jaeger.sh, build-otelcol.sh and fetch-fuseki.sh (sourced, not run).
#
# An engine is built (or fetched) once per machine into a directory of its own OUTSIDE the
# checkout, named after a hash of the files that pin it:
#
#   ${OTEL_PROV_ENGINE_CACHE:-~/.cache/otel-prov/engines}/NAME-HASH/
#
# so that a clean checkout on the same machine (CI clones afresh) builds nothing, and a
# change of a pinning file builds anew beside the old one. The directory appears, whole,
# only once the build has succeeded (it is built under NAME-HASH.partial and renamed).
# Two builds of one engine at once (make servers beside a test that needs it) are one:
# the second waits on a lock and finds the first's result. The build's output goes to
# NAME-HASH.log and to stderr; a failed build exits non-zero with the end of that log, in
# the build's own words. The last line on stdout is the built file's path, for the tests
# (tests/engine_builds.py) to run.

ENGINE_CACHE="${OTEL_PROV_ENGINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/otel-prov/engines}"

engine_fail() {
    echo "$ENGINE_NAME: ERROR: $*" >&2
    exit 1
}

# engine_key FILE...: 16 hex digits of a hash of the files' names and contents (a FILE may
# be a process substitution, <(go version), for a toolchain's version).
engine_key() {
    local file
    for file in "$@"; do
        [ -r "$file" ] || engine_fail "pinning file $file is missing"
        if [ -f "$file" ]; then printf '%s\n' "$(basename "$file")"; fi
        cat "$file"
    done | sha256sum | cut -c1-16
}

# engine_build NAME RELATIVE_PATH BUILD_FUNCTION PINNING_FILE...
#
# Prints DIR/RELATIVE_PATH when DIR=NAME-HASH exists; else runs BUILD_FUNCTION OUT (OUT an
# empty directory it fills) under a lock, with its output in the log, and times it.
engine_build() {
    ENGINE_NAME="$1"
    local relative="$2" build="$3"
    shift 3
    local key dir out log lock begin seconds status
    key="$(engine_key "$@")"
    dir="$ENGINE_CACHE/$ENGINE_NAME-$key"
    if [ -e "$dir/$relative" ]; then
        echo "$ENGINE_NAME: cached in $dir (nothing to build)" >&2
        echo "$dir/$relative"
        return 0
    fi
    mkdir -p "$ENGINE_CACHE" || engine_fail "cannot create $ENGINE_CACHE"
    lock="$dir.lock"
    exec 9>"$lock"
    if ! flock -n 9; then
        echo "$ENGINE_NAME: waiting for the build under way ($dir.log)" >&2
        flock 9 || engine_fail "cannot lock $lock"
    fi
    if [ -e "$dir/$relative" ]; then # built by the run we waited for
        echo "$ENGINE_NAME: built by another run in $dir" >&2
        echo "$dir/$relative"
        return 0
    fi
    out="$dir.partial"
    log="$dir.log"
    rm -rf "$out" && mkdir -p "$out" || engine_fail "cannot create $out"
    echo "$ENGINE_NAME: building into $dir (log $log)" >&2
    begin=$SECONDS
    # Not as an `if` condition: bash ignores `set -e` there, so that a failed step would
    # not stop the build.
    set +e
    (set -e && "$build" "$out") >"$log" 2>&1
    status=$?
    set -e
    if [ "$status" -ne 0 ]; then
        seconds=$((SECONDS - begin))
        echo "$ENGINE_NAME: the build failed after ${seconds}s; the end of $log:" >&2
        tail -n 60 "$log" >&2
        rm -rf "$out"
        exit 1
    fi
    [ -e "$out/$relative" ] || engine_fail "the build succeeded but left no $relative (log $log)"
    mv "$out" "$dir" || engine_fail "cannot move $out to $dir"
    seconds=$((SECONDS - begin))
    echo "$ENGINE_NAME: built in ${seconds}s ($(du -sh "$dir" | cut -f1) in $dir)" >&2
    echo "$dir/$relative"
}
