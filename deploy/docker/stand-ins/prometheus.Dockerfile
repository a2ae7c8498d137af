# Stand-in for prom/prometheus where no image registry answers (scripts/containers.sh images):
# Prometheus built from the Go module proxy (github.com/prometheus/prometheus, the module promtool
# comes from in scripts/validate-deploy.sh), laid out like the official image: /bin/prometheus as
# entrypoint, config in /etc/prometheus, data in /prometheus, user nobody.
FROM debian:bookworm-slim
COPY prometheus /bin/prometheus
RUN mkdir -p /etc/prometheus /prometheus && chown nobody:nogroup /prometheus \
 && printf 'global:\n  scrape_interval: 15s\nscrape_configs:\n  - job_name: prometheus\n    static_configs:\n      - targets: [localhost:9090]\n' >/etc/prometheus/prometheus.yml
USER nobody
WORKDIR /prometheus
VOLUME /prometheus
EXPOSE 9090
ENTRYPOINT ["/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
