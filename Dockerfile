# The runner's own image: runner package, Playwright (client) + Debian's Chromium with pinned fonts, Node 20
# and the pinned web template, for users who run everything in containers (docs/docker.md).
#
#   scripts/build-images.sh                                   # base (offline) + sandbox images
#   docker build -t genui-runner \
#     --build-arg BASE_IMAGE=genui-base:bookworm \
#     --build-arg SANDBOX_BUILD_IMAGE=$(.venv/bin/python -c 'from runner.sandbox.images import *; print(content_tag(image_specs()["build"], OFFLINE_BASE))') .
#
# Node and the template's node_modules come from the sandbox build image (same lockfile, same binary), so
# this build needs PyPI but no npm registry. Verify/update the base pin: docker buildx imagetools inspect debian:bookworm-slim
ARG BASE_IMAGE=debian:bookworm-slim@sha256:96e378d7e6531ac9a15ad505478fcc2e69f371b10f5cdf87857c4b8188404716
ARG SANDBOX_BUILD_IMAGE=genui-build:latest
FROM ${SANDBOX_BUILD_IMAGE} AS template

FROM ${BASE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      python3=3.11.2-1+b1 python3-venv=3.11.2-1+b1 ca-certificates git \
      chromium=156.0.8078.108-1~deb12u1 fonts-liberation=1:1.07.4-11 fonts-dejavu-core=2.37-6 \
      bubblewrap util-linux \
 && rm -rf /var/lib/apt/lists/*
COPY --from=template /usr/local/bin/node /usr/local/bin/node

WORKDIR /opt/genui
COPY pyproject.toml README.md ./
COPY runner ./runner
RUN python3 -m venv /opt/genui/.venv \
 && /opt/genui/.venv/bin/pip install --no-cache-dir -q -e . \
 && rm -rf /root/.cache
COPY conf ./conf
COPY tasks ./tasks
COPY bench ./bench
# The web template's node_modules where runner.sandbox.web_template looks for them (cache keyed by lockfile hash).
COPY --from=template /node_modules /opt/genui/.cache/node_modules.tmp
RUN hash=$(/opt/genui/.venv/bin/python -c 'from runner.sandbox.web_template import template_hash; print(template_hash())') \
 && mkdir -p .cache/web-template/$hash \
 && mv .cache/node_modules.tmp .cache/web-template/$hash/node_modules \
 && echo $hash > .cache/web-template/$hash/node_modules/.genui-complete

ENV PATH=/opt/genui/.venv/bin:$PATH LANG=C.UTF-8 PYTHONUNBUFFERED=1
# Results land in /opt/genui/outputs and mlruns: mount volumes there to keep them.
ENTRYPOINT ["python", "-m", "runner"]
