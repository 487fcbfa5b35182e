# The runner's own image: the runner package in a venv, Debian's Chromium (its headless shell) and fonts, bubblewrap, the pinned build
# Node and the web template's node_modules, for users who run everything in containers (docs/docker.md).
#
#   bash scripts/build-images.sh          # genui-base:bookworm (this machine's apt sources and CA bundle) + sandbox images
#   docker build -t genui-runner .       # SANDBOX_BUILD_IMAGE defaults to genui-build:current (build-images.sh)
#   docker run --rm --cap-add SYS_ADMIN --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
#     --security-opt systempaths=unconfined -v /sys/fs/cgroup:/sys/fs/cgroup genui-runner
#
# Node and the template's node_modules come from the sandbox build image (same lockfile, same binary), so this
# build needs PyPI (the venv) and the Debian mirror, no npm registry. Proxy variables pass as Docker's predefined
# build arguments (--build-arg HTTPS_PROXY=...); the CA bundle is the base image's (bootstrap.sh copies the
# machine's). Distribution packages are named, never pinned (their builds are withdrawn within days).
ARG BASE_IMAGE=genui-base:bookworm
ARG SANDBOX_BUILD_IMAGE=genui-build:current
FROM ${SANDBOX_BUILD_IMAGE} AS template

# The venv is made in a stage of its own, so pip's settings and caches stay out of the final image.
FROM ${BASE_IMAGE} AS venv
# The base's CA bundle (genui-base: the machine's own, its proxy's CA included) is set aside first: installing
# python3 pulls in ca-certificates, which rewrites the bundle from Debian's list alone.
RUN { cp /etc/ssl/certs/ca-certificates.crt /etc/genui-build-ca.crt 2>/dev/null || true; } \
 && apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && { [ -s /etc/genui-build-ca.crt ] || cp /etc/ssl/certs/ca-certificates.crt /etc/genui-build-ca.crt; }
ENV PIP_CERT=/etc/genui-build-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /opt/genui
# The dependencies install against an empty package first, so this layer stays cached across code edits (the
# editable install points at /opt/genui/runner, filled by the COPY below); pyproject's readme only feeds package
# metadata, an empty one keeps the layer cached across doc edits.
COPY pyproject.toml ./
RUN mkdir runner && touch runner/__init__.py README.md && python3 -m venv /opt/genui/.venv \
 && /opt/genui/.venv/bin/pip install -q -e .
COPY runner ./runner

FROM ${BASE_IMAGE}
# Chromium's headless shell (every run renders with it; a container has no window to show) + the fonts pages may
# use, libatomic1 for the Playwright driver's node, bubblewrap (sandbox=local) and prlimit (util-linux) for the
# build limits.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 chromium-headless-shell fonts-liberation fonts-dejavu-core \
      fontconfig libatomic1 bubblewrap util-linux \
 && rm -rf /var/lib/apt/lists/* \
 && fc-cache -f
COPY --from=template /usr/local/bin/node /usr/local/bin/node
WORKDIR /opt/genui
COPY --from=venv /opt/genui /opt/genui
COPY conf ./conf
COPY tasks ./tasks
COPY bench ./bench
# The sandbox images' recipes: sandbox=docker finds the host engine's images by their hash (runner/sandbox/images.py).
COPY images ./images
# The web template's node_modules where runner.sandbox.web_template looks for them (cache keyed by lockfile hash).
COPY --from=template /node_modules /opt/genui/.cache/node_modules.tmp
# The build image's Node is the pinned build Node: linked where runner.sandbox.build_node looks for it.
RUN hash=$(/opt/genui/.venv/bin/python -c 'from runner.sandbox.web_template import template_hash; print(template_hash())') \
 && mkdir -p .cache/web-template/$hash \
 && mv .cache/node_modules.tmp .cache/web-template/$hash/node_modules \
 && echo $hash > .cache/web-template/$hash/node_modules/.genui-complete \
 && set -- $(/opt/genui/.venv/bin/python -c 'from runner.sandbox import build_node as b; print(b.build_node_hash(), b.build_node_package())') \
 && mkdir -p .cache/build-node/$1/node_modules/$2/bin \
 && ln -s /usr/local/bin/node .cache/build-node/$1/node_modules/$2/bin/node \
 && echo $1 > .cache/build-node/$1/node_modules/.genui-complete \
 && node --version && /usr/lib/chromium/chromium-headless-shell --version && bwrap --version

ENV PATH=/opt/genui/.venv/bin:$PATH LANG=C.UTF-8 PYTHONUNBUFFERED=1
# Results land in /opt/genui/outputs and mlruns: mount volumes there to keep them.
ENTRYPOINT ["python", "-m", "runner"]
