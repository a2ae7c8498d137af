# Stand-in for redis:7 where no image registry answers (scripts/containers.sh images): Debian's
# redis-server 7 on debian:bookworm-slim. Like the official image: data in /data (a volume), the
# server listens on every interface without protected mode (the compose network is the boundary),
# runs as user redis, and redis-cli is on PATH for the healthcheck.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends redis-server redis-tools \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown redis:redis /data
WORKDIR /data
VOLUME /data
USER redis
EXPOSE 6379
CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--dir", "/data"]
