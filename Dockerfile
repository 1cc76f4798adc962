# syntax=docker/dockerfile:1
# The Sluice image: one image for every role of compose/ (broker, hub worker, `sluice up`,
# Spark master/worker/driver, the one-shot init services). docs/deploy.md explains the build
# arguments; compose/quickstart.yml and compose/cluster.yml build it from this directory.
#
#   docker build -t sluice:local .                              # with Spark (the default)
#   docker build -t sluice:slim --build-arg SLUICE_EXTRAS= --build-arg WITH_JAVA=false .

ARG PYTHON_VERSION=3.11

# --- build: a virtualenv with the package and its extras, compiled where a wheel is missing ---
FROM python:${PYTHON_VERSION}-slim AS build
ARG SLUICE_EXTRAS=spark
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential \
 && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/sluice
WORKDIR /src
COPY . .
# A regular (not editable) install: the runtime stage copies only /opt/sluice, not /src.
RUN /opt/sluice/bin/pip install --no-cache-dir --upgrade pip \
 && /opt/sluice/bin/pip install --no-cache-dir ".${SLUICE_EXTRAS:+[$SLUICE_EXTRAS]}"

# --- runtime: the virtualenv, a Java runtime for Spark, a non-root user ---
FROM python:${PYTHON_VERSION}-slim
ARG WITH_JAVA=true
# Spark (the `spark` extra) needs a Java 17+ runtime; brokers and hub workers do not.
# (/usr/share/man/man1: the JRE's package links its man pages there; slim images lack it.)
RUN if [ "$WITH_JAVA" = "true" ]; then \
      mkdir -p /usr/share/man/man1 \
      && apt-get update \
      && apt-get install -y --no-install-recommends default-jre-headless procps \
      && rm -rf /var/lib/apt/lists/*; \
    fi
# A fixed uid/gid so named volumes keep one owner across rebuilds and services. A named volume
# starts as a copy of the image's directory it is mounted on, owner included, so every mount
# point a Sluice service writes to exists here, owned by sluice.
RUN groupadd --system --gid 10001 sluice \
 && useradd --system --uid 10001 --gid sluice --home-dir /var/lib/sluice --shell /usr/sbin/nologin sluice \
 && mkdir -p /var/lib/sluice/pipelines /var/log/app /etc/sluice \
 && chown -R sluice:sluice /var/lib/sluice /var/log/app
COPY --from=build /opt/sluice /opt/sluice
COPY compose/healthcheck.py /usr/local/bin/sluice-healthcheck
RUN chmod 0755 /usr/local/bin/sluice-healthcheck
# SLUICE_DATA_DIR: `sluice connectors ...` run inside the container finds the hub's token.
# PYSPARK_PYTHON: Spark executors run the same Python, which has the `sluice` data source.
ENV PATH=/opt/sluice/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    SLUICE_DATA_DIR=/var/lib/sluice \
    PYSPARK_PYTHON=/opt/sluice/bin/python
USER sluice
WORKDIR /var/lib/sluice
# 8083 REST API and console, 8081 schema registry, 9092 Kafka (brokers).
EXPOSE 8083 8081 9092
# The hub's GET /health (KIP-1017; no credentials needed). Broker services override it with
# `sluice-healthcheck broker 127.0.0.1:9092` (an ApiVersions round trip).
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["sluice-healthcheck", "http", "http://127.0.0.1:8083/health"]
ENTRYPOINT ["sluice"]
CMD ["up", "--data-dir", "/var/lib/sluice", "--host", "0.0.0.0"]
