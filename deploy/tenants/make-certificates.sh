#!/bin/sh
# Certificates and tokens for docker-compose.tenants.yaml, made with openssl:
#
#   sh deploy/tenants/make-certificates.sh            # writes deploy/tenants/certs/
#   sh deploy/tenants/make-certificates.sh OUT_DIR    # or there
#
# ca.pem                    the CA every party trusts (and the receivers' --client-ca)
# receiver.pem              the receivers' server certificate (prov-receiver, localhost)
# reader.pem                the readers' server certificate (reader-team-a, -b, localhost)
# collector-team-a.pem      the Collector's client certificate for team A's pipeline:
#                           subject CN=team-a,O=Example, team-a's in tenants.json
# collector-team-b.pem      the same for team B (CN=team-b,O=Example)
# probe.pem                 a client certificate of no tenant, for the receivers' health
#                           probe (/healthz needs no tenant, only mutual TLS)
# reader-team-a.token, reader-team-b.token   each team's token for its reader (serve)
#
# Each with its key (NAME-key.pem).  Keys and tokens are created mode 0600 (umask 077,
# never widened later) and, when run as root, given to uid 10001, the user every
# container that reads them runs as (user agent of agent.Dockerfile, the Collector
# image's user); certificates are readable by all.  Keep real keys in your secret store.
set -eu
out="${1:-$(dirname "$0")/certs}"
mkdir -p "$out"
chmod 0755 "$out" # the containers' user reaches its files in the mount
cd "$out"
days=365
container_uid=10001

# secret FILE COMMAND...: COMMAND's output in FILE, its owner's alone from the start; an
# old FILE goes first, since writing over it would keep its mode.
secret() {
    file="$1"
    shift
    rm -f "$file"
    (umask 077 && "$@" >"$file")
}
key() { secret "$1" openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 2>/dev/null; }

key ca-key.pem
openssl req -x509 -new -key ca-key.pem -out ca.pem -days "$days" \
    -subj "/CN=otel-prov deployment CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"

# issue NAME SUBJECT EXTENDED-KEY-USAGE [SUBJECT-ALT-NAMES]
issue() {
    key "$1-key.pem"
    openssl req -new -key "$1-key.pem" -out "$1.csr" -subj "$2"
    {
        echo "basicConstraints=critical,CA:FALSE"
        echo "extendedKeyUsage=$3"
        if [ -n "${4:-}" ]; then echo "subjectAltName=$4"; fi
    } >"$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial \
        -out "$1.pem" -days "$days" -extfile "$1.ext" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
}
issue receiver "/CN=prov-receiver" serverAuth "DNS:prov-receiver,DNS:localhost,IP:127.0.0.1"
issue reader "/CN=otel-prov reader" serverAuth \
    "DNS:reader-team-a,DNS:reader-team-b,DNS:localhost,IP:127.0.0.1"
issue collector-team-a "/O=Example/CN=team-a" clientAuth
issue collector-team-b "/O=Example/CN=team-b" clientAuth
issue probe "/O=Example/CN=health-probe" clientAuth
for team in team-a team-b; do
    secret "reader-$team.token" openssl rand -hex 32
done
rm -f ca.srl
chmod 0644 ca.pem receiver.pem reader.pem collector-team-a.pem collector-team-b.pem probe.pem
read_by_containers="receiver-key.pem reader-key.pem collector-team-a-key.pem
    collector-team-b-key.pem probe-key.pem reader-team-a.token reader-team-b.token"
if [ "$(id -u)" = 0 ]; then
    # shellcheck disable=SC2086 # the list splits into its names
    chown "$container_uid:$container_uid" $read_by_containers
else
    echo "the containers read the keys and tokens as uid $container_uid: run" \
        "sudo chown $container_uid:$container_uid" $read_by_containers "in $(pwd)" >&2
fi
echo "wrote $(pwd): ca.pem, receiver.pem, reader.pem, collector-team-a.pem, collector-team-b.pem, probe.pem (and keys), reader-team-a.token, reader-team-b.token"
