# The example agent service, with otel-prov installed from this checkout.
# Built by deploy/docker-compose.yaml with the repository root as context:
#   docker build -f deploy/agent.Dockerfile .
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# The package first (pyproject's package-dir mapping: otel_prov, exporters, semconv),
# with its receive and serve extras (docker-compose.receivers.yaml and .tenants.yaml run
# `otel-prov receive` and `serve` on this image) and the example's web stack, so that
# editing the example does not reinstall them.
COPY pyproject.toml README.md deploy/agent-requirements.txt ./
COPY otel_prov ./otel_prov
COPY exporters ./exporters
COPY semconv ./semconv
RUN pip install '.[receive,serve]' -r agent-requirements.txt

COPY examples ./examples

# An unprivileged user; /spool (a named volume in compose) starts out owned by it.
RUN useradd --system --uid 10001 --create-home agent \
    && mkdir -p /spool \
    && chown agent /spool
USER agent

# The agent service on :8000 (POST /ask), its weather service on :8001.
EXPOSE 8000
CMD ["python", "examples/service_app.py", "--host", "0.0.0.0"]
