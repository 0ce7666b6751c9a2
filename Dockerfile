# fairstream as a container: the wheel (with the compiled trial modules) is built in one stage and installed, without
# compilers, in a slim image that runs as an unprivileged user. The base image is pinned by its exact version tag;
# pin it by digest too where the build reaches the registry:
#   docker build --build-arg PYTHON_IMAGE=python:3.12.8-slim-bookworm@sha256:<digest> -t fairstream .
# Python packages come from the lock files, every one by version and hash (pip --require-hashes).
#   docker build -t fairstream .
#   docker run --rm fairstream --help

ARG PYTHON_IMAGE=python:3.12.8-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY requirements-build.lock ./
RUN pip install --no-cache-dir --require-hashes -r requirements-build.lock
COPY pyproject.toml setup.py README.md ./
COPY pipeline ./pipeline
COPY connectors ./connectors
COPY specs ./specs
RUN pip wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
COPY requirements.lock /tmp/requirements.lock
RUN pip install --no-cache-dir --require-hashes -r /tmp/requirements.lock && rm /tmp/requirements.lock
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-deps /wheels/*.whl && rm -rf /wheels \
    && useradd --create-home --uid 10001 fairstream \
    && mkdir /state && chown fairstream /state
# /state: where docker-compose keeps the monitor's recovery store (a volume the unprivileged user can write)
USER fairstream
WORKDIR /home/fairstream
# Healthy while the run's metrics endpoint answers /healthz: start long-running jobs with --metrics-port 9100
# (or set FAIRSTREAM_METRICS_PORT to the port given); one-off commands (replay, alerts) turn the check off.
ENV FAIRSTREAM_METRICS_PORT=9100
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(f'http://127.0.0.1:{os.environ[\"FAIRSTREAM_METRICS_PORT\"]}/healthz', timeout=4)"]
ENTRYPOINT ["fairstream"]
CMD ["--help"]
