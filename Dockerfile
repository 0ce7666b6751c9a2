# fairstream as a container: the wheel (with the compiled trial modules) is built in one stage and installed, without
# compilers, in a slim image that runs as an unprivileged user.
#   docker build -t fairstream .
#   docker run --rm fairstream --help

FROM python:3.12-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.12-slim
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels \
    && useradd --create-home --uid 10001 fairstream \
    && mkdir /state && chown fairstream /state
# /state: where docker-compose keeps the monitor's recovery store (a volume the unprivileged user can write)
USER fairstream
WORKDIR /home/fairstream
ENTRYPOINT ["fairstream"]
CMD ["--help"]
