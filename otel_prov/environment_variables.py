"""Environment variables read by otel-prov.

Every setting is also a keyword argument (of :func:`otel_prov.configure`, the processor
or the exporter), which wins over the variable; a malformed value is logged and the
documented default used instead, never a crash.
"""

OTEL_PROV_SPARQL_UPDATE_ENDPOINT = "OTEL_PROV_SPARQL_UPDATE_ENDPOINT"
"""
.. envvar:: OTEL_PROV_SPARQL_UPDATE_ENDPOINT

SPARQL 1.1 Update endpoint that provenance is sent to.  Unset: the embedded store.
"""

OTEL_PROV_SPARQL_QUERY_ENDPOINT = "OTEL_PROV_SPARQL_QUERY_ENDPOINT"
"""
.. envvar:: OTEL_PROV_SPARQL_QUERY_ENDPOINT

SPARQL query endpoint; the CLI reads from it when ``--store``/``--endpoint`` are not given.
Default: the update endpoint with its last ``/update`` replaced by ``/query``.
"""

OTEL_PROV_SPARQL_GRAPH_STORE_ENDPOINT = "OTEL_PROV_SPARQL_GRAPH_STORE_ENDPOINT"
"""
.. envvar:: OTEL_PROV_SPARQL_GRAPH_STORE_ENDPOINT

SPARQL 1.1 Graph Store Protocol URL, ``{graph}`` standing for the graph IRI
(``http://host:7878/store?graph={graph}``; Virtuoso
``.../sparql-graph-crud-auth?graph-uri={graph}``).  Set, the SPARQL exporter POSTs its
batches there as N-Triples instead of ``INSERT DATA``.  Unset: SPARQL Update.
"""

OTEL_PROV_SPARQL_HEADERS = "OTEL_PROV_SPARQL_HEADERS"
"""
.. envvar:: OTEL_PROV_SPARQL_HEADERS

``key=value,...`` headers for the SPARQL endpoints (same syntax as
``OTEL_EXPORTER_OTLP_HEADERS``).  Never logged.
"""

OTEL_PROV_GRAPH = "OTEL_PROV_GRAPH"
"""
.. envvar:: OTEL_PROV_GRAPH

Named graph IRI that provenance is written to.  Default: ``urn:otel-prov:graph``.
"""

OTEL_PROV_STORE = "OTEL_PROV_STORE"
"""
.. envvar:: OTEL_PROV_STORE

Directory of the embedded (pyoxigraph, on disk) store (with ``OTEL_PROV_BACKEND=file``,
the file provenance is appended to).  Default: ``.otel-prov/store`` in the current
directory.
"""

OTEL_PROV_BACKEND = "OTEL_PROV_BACKEND"
"""
.. envvar:: OTEL_PROV_BACKEND

The store backend provenance goes to, by its registered name: ``embedded`` (or
``oxigraph``), ``sparql``, ``file`` (``OTEL_PROV_STORE`` names the file, ``.nq``,
``.nt``, ``.trig`` or ``.ttl``), or one an installed package registers under the entry
point group ``otel_prov.backends``.  Unset: ``sparql`` when
``OTEL_PROV_SPARQL_UPDATE_ENDPOINT`` is set, else ``embedded``.
"""

OTEL_PROV_SPOOL_DIR = "OTEL_PROV_SPOOL_DIR"
"""
.. envvar:: OTEL_PROV_SPOOL_DIR

Durable spool for batches the store has not accepted yet.
"""

OTEL_PROV_CAPTURE_CONTENT = "OTEL_PROV_CAPTURE_CONTENT"
"""
.. envvar:: OTEL_PROV_CAPTURE_CONTENT

``true`` (default) records thoughts, arguments, observations, questions and answers on
the ``otel_prov.*`` attributes; ``false`` records structure only.
"""

OTEL_PROV_STRIP_CONTENT = "OTEL_PROV_STRIP_CONTENT"
"""
.. envvar:: OTEL_PROV_STRIP_CONTENT

For ``otel-prov receive`` and ``otel-prov import`` (as their ``--no-content``): ``true``
stores no content of any span, whoever recorded it and whatever the agents' own switches
were (sizes and hashes stay), so that a Collector-side deployment strips what agents sent.
Default: ``false``.
"""

OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT = (
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
)
"""
.. envvar:: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT

The OpenTelemetry GenAI opt-in for the ``gen_ai.*`` content attributes (off unless set to
``true``, ``SPAN_ONLY`` or ``SPAN_AND_EVENT``).  ``NO_CONTENT`` set explicitly also turns
the ``otel_prov.*`` content off.
"""

OTEL_PROV_SESSION_TIMEOUT = "OTEL_PROV_SESSION_TIMEOUT"
"""
.. envvar:: OTEL_PROV_SESSION_TIMEOUT

Seconds after which a session whose span never ended is exported as ``incomplete``.
Default: 600.
"""

OTEL_PROV_STREAM = "OTEL_PROV_STREAM"
"""
.. envvar:: OTEL_PROV_STREAM

``true`` (the default): record each step of a run still open (an iteration, a tool or
model call) as it ends, within a worker cycle, the run shown ``running`` until it ends;
each cycle's steps are the next entry of the writer's chain, sealed over what they add,
and the run's end takes back what only a run still open said (its ``running`` status).
For ``otel-prov receive`` too (``--no-stream`` turns it off there).  ``false``: a run is
recorded when it ends.  An exporter that cannot take triples back (``FileExporter``)
records runs when they end whatever this says.
"""

OTEL_PROV_MAX_PENDING_SPANS = "OTEL_PROV_MAX_PENDING_SPANS"
"""
.. envvar:: OTEL_PROV_MAX_PENDING_SPANS

Most spans the processor holds before it drops (and counts) new ones.  Default: 100000.
For ``otel-prov receive``: most spans buffered and not yet stored before it refuses
requests (HTTP 429, gRPC UNAVAILABLE; the senders retry them).  Default: 500000.
"""

OTEL_PROV_JAEGER_URL = "OTEL_PROV_JAEGER_URL"
"""
.. envvar:: OTEL_PROV_JAEGER_URL

URL template with ``{trace_id}``: ``otel-prov show`` prints a link to the trace.
"""

OTEL_PROV_TEMPO_URL = "OTEL_PROV_TEMPO_URL"
"""
.. envvar:: OTEL_PROV_TEMPO_URL

URL template with ``{trace_id}`` (e.g. Grafana's explore view on Tempo): ``otel-prov
show`` prints a link to the trace.
"""

OTEL_PROV_TRACE_URL = "OTEL_PROV_TRACE_URL"
"""
.. envvar:: OTEL_PROV_TRACE_URL

URL template with ``{trace_id}`` of any other trace backend (Arize Phoenix, Honeycomb,
Datadog...): ``otel-prov show`` and the session page link the trace there, under the name
:envvar:`OTEL_PROV_TRACE_LABEL` gives it.
"""

OTEL_PROV_TRACE_LABEL = "OTEL_PROV_TRACE_LABEL"
"""
.. envvar:: OTEL_PROV_TRACE_LABEL

What the link of :envvar:`OTEL_PROV_TRACE_URL` is called (``Phoenix``).  Default:
``traces``.
"""

OTEL_PROV_WAL_DIR = "OTEL_PROV_WAL_DIR"
"""
.. envvar:: OTEL_PROV_WAL_DIR

Write-ahead log of tool calls at dispatch, and of the session and iteration around each
(a run killed inside a tool is stored ``incomplete`` by the next process started on the
same directory).  ``configure()`` defaults it to
``.otel-prov/wal``; a bare ``ProvSpanProcessor`` keeps none unless this is set.
"""

OTEL_PROV_WAL_FSYNC = "OTEL_PROV_WAL_FSYNC"
"""
.. envvar:: OTEL_PROV_WAL_FSYNC

``always`` fsyncs every intent before the tool runs, and every batch the SPARQL exporter
keeps in its spool before it reports the batch exported (survives a machine crash);
``never`` (default) survives the process being killed.
"""

OTEL_PROV_BLOB_DIR = "OTEL_PROV_BLOB_DIR"
"""
.. envvar:: OTEL_PROV_BLOB_DIR

Where values larger than ``OTEL_PROV_BLOB_THRESHOLD`` are kept, content-addressed by
SHA-256 (default ``.otel-prov/blobs``; created only when a large value comes).
"""

OTEL_PROV_BLOB_THRESHOLD = "OTEL_PROV_BLOB_THRESHOLD"
"""
.. envvar:: OTEL_PROV_BLOB_THRESHOLD

Size in bytes above which a content value goes to the blob store and the graph keeps a
preview, its hash, size, media type and location (default 65536).
"""

OTEL_PROV_REDACT_PATTERNS = "OTEL_PROV_REDACT_PATTERNS"
"""
.. envvar:: OTEL_PROV_REDACT_PATTERNS

Regular expressions whose matches become ``[REDACTED]`` in every span attribute before
anything leaves the process, as a JSON array (``["sk-[A-Za-z0-9]{20,}"]``); the same as
``configure(redact_patterns=...)``, and the way to switch redaction on in zero-code setups.
"""

OTEL_PROV_PROVENANCE = "OTEL_PROV_PROVENANCE"
"""
.. envvar:: OTEL_PROV_PROVENANCE

``false`` makes ``configure()`` record no provenance in the process, only OTLP: for agents
whose traces a Collector sends to ``otel-prov receive``; it also silences the warning an
instrumentor gives when nothing in the process stores provenance.  Default ``true``.
"""

OTEL_PROV_RECEIVER_GRPC = "OTEL_PROV_RECEIVER_GRPC"
"""
.. envvar:: OTEL_PROV_RECEIVER_GRPC

``HOST:PORT`` where ``otel-prov receive`` takes OTLP/gRPC (``TraceService/Export``), or
``off``.  Default: ``127.0.0.1:4317``.
"""

OTEL_PROV_RECEIVER_HTTP = "OTEL_PROV_RECEIVER_HTTP"
"""
.. envvar:: OTEL_PROV_RECEIVER_HTTP

``HOST:PORT`` where ``otel-prov receive`` takes OTLP/HTTP (``POST /v1/traces``) and serves
``GET /healthz`` and ``GET /metrics``, or ``off``.  Default: ``127.0.0.1:4318``.
"""

OTEL_PROV_RECEIVER_DIR = "OTEL_PROV_RECEIVER_DIR"
"""
.. envvar:: OTEL_PROV_RECEIVER_DIR

The receiver's data directory: its journal of accepted requests, replayed at the next
start for whatever was not yet stored.  Default: ``.otel-prov/receiver``.
"""

OTEL_PROV_TRACE_IDLE = "OTEL_PROV_TRACE_IDLE"
"""
.. envvar:: OTEL_PROV_TRACE_IDLE

Seconds without a new span of a trace after which the receiver maps the trace whole.
Default: 5.
"""

OTEL_PROV_RECEIVER_TOKEN = "OTEL_PROV_RECEIVER_TOKEN"
"""
.. envvar:: OTEL_PROV_RECEIVER_TOKEN

A bearer token the receiver requires (``Authorization: Bearer <token>`` on HTTP, the
``authorization`` metadata on gRPC); unset, it requires none.  Never logged.
"""

OTEL_PROV_RECEIVER_METRICS_TOKEN = "OTEL_PROV_RECEIVER_METRICS_TOKEN"
"""
.. envvar:: OTEL_PROV_RECEIVER_METRICS_TOKEN

A bearer token the receiver's ``/metrics`` requires, and which reads every tenant's
samples (Prometheus: ``authorization: {credentials_file: ...}``).  Unset: ``/metrics`` is
open, or with :envvar:`OTEL_PROV_TENANTS` needs a tenant's token and shows that tenant's
samples only.  ``--metrics-token-file`` wins.  Never logged.
"""

OTEL_PROV_RECEIVER_TLS_CERT = "OTEL_PROV_RECEIVER_TLS_CERT"
"""
.. envvar:: OTEL_PROV_RECEIVER_TLS_CERT

PEM file of the certificate (and chain) the receiver shows: set with
:envvar:`OTEL_PROV_RECEIVER_TLS_KEY`, both OTLP/gRPC and OTLP/HTTP speak TLS only.
Unset: plaintext.  ``--tls-cert`` wins.
"""

OTEL_PROV_RECEIVER_TLS_KEY = "OTEL_PROV_RECEIVER_TLS_KEY"
"""
.. envvar:: OTEL_PROV_RECEIVER_TLS_KEY

PEM file of the private key of :envvar:`OTEL_PROV_RECEIVER_TLS_CERT`.  ``--tls-key`` wins.
"""

OTEL_PROV_RECEIVER_CLIENT_CA = "OTEL_PROV_RECEIVER_CLIENT_CA"
"""
.. envvar:: OTEL_PROV_RECEIVER_CLIENT_CA

PEM file of the CA that signs the clients' certificates: set, the receiver speaks mutual
TLS and refuses a client without a certificate of that CA.  Needs the certificate and
key.  Unset: no client certificate asked for.  ``--client-ca`` wins.
"""

OTEL_PROV_TENANTS = "OTEL_PROV_TENANTS"
"""
.. envvar:: OTEL_PROV_TENANTS

A tenants file (JSON) for ``otel-prov receive`` and ``otel-prov serve``: each tenant's
tokens (and the proxy users of ``serve``) and the tenants it may read.  Set, the token of
a request picks the tenant, each tenant's runs go to a graph of its own, and a reader
sees only the tenants it may read.  Unset: one graph, as without tenants.  ``--tenants``
wins.
"""

OTEL_PROV_TENANT = "OTEL_PROV_TENANT"
"""
.. envvar:: OTEL_PROV_TENANT

The tenant whose graph this process writes to (``configure(tenant=...)`` wins) and the
CLI reads (``--tenant`` wins): the graph ``<OTEL_PROV_GRAPH>/tenants/<name>``.  Unset:
the graph itself.
"""

OTEL_PROV_RECEIVER_FSYNC = "OTEL_PROV_RECEIVER_FSYNC"
"""
.. envvar:: OTEL_PROV_RECEIVER_FSYNC

``true`` (default): the receiver fsyncs each request to its journal before acknowledging
it (survives a machine crash); ``false``: survives the receiver being killed only.
"""

OTEL_PROV_PRICES = "OTEL_PROV_PRICES"
"""
.. envvar:: OTEL_PROV_PRICES

A TOML or JSON file of prices per million tokens, keyed by model name (see
``otel_prov/prov/_prices.py``): model calls that report tokens and no cost are priced
from it (``oprov:costSource "local"``).  Unset: only reported costs are recorded.
"""

OTEL_PROV_SIGNING_KEY = "OTEL_PROV_SIGNING_KEY"
"""
.. envvar:: OTEL_PROV_SIGNING_KEY

An Ed25519 private key (``otel-prov keygen`` writes one, ``signing.key``): every writer
(the processor, ``receive``, ``import``, ``annotate``) signs each chain entry and
checkpoint it seals with it.  Never logged nor stored; a key that cannot be read is
reported at start and nothing is signed.  Needs ``otel-prov[sign]``.
"""

OTEL_PROV_CHECKPOINT_FILE = "OTEL_PROV_CHECKPOINT_FILE"
"""
.. envvar:: OTEL_PROV_CHECKPOINT_FILE

A local append-only file: each writer appends its signed checkpoints (chain id, sequence
number, head hash, time) to it, one JSON object a line, besides storing them.  Ship it
anywhere (a log system, a git repository, a timestamping service);
``otel-prov verify --checkpoints FILE`` checks the store against it.
"""

OTEL_PROV_CHECKPOINT_EVERY = "OTEL_PROV_CHECKPOINT_EVERY"
"""
.. envvar:: OTEL_PROV_CHECKPOINT_EVERY

A writer emits a checkpoint after this many chain entries (and at shutdown).  Default: 100.
"""

OTEL_PROV_CHECKPOINT_INTERVAL = "OTEL_PROV_CHECKPOINT_INTERVAL"
"""
.. envvar:: OTEL_PROV_CHECKPOINT_INTERVAL

Seconds after which a writer with new chain entries emits a checkpoint (and at
shutdown).  Default: 60.
"""
