# Stand-in for debian:bookworm-slim where no image registry answers (scripts/containers.sh images):
# a debootstrap (minbase) rootfs from Debian's mirror, imported as subx-stand-in/debian-rootfs, plus
# the CA bundle of the machine that builds it (empty where it has none): image builds reach npm and
# apt through whatever TLS-inspecting egress that machine trusts.
ARG SUITE=bookworm
FROM subx-stand-in/debian-rootfs:${SUITE}
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
CMD ["bash"]
