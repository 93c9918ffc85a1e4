#!/usr/bin/env bash
# Serve the app as WORKERS Streamlit processes behind nginx on one port, with sticky sessions (see
# deploy/nginx.conf.template). Runs in the foreground; Ctrl-C (or SIGTERM) stops nginx and every worker.
#
#   deploy/serve.sh [WORKERS]        (make serve WORKERS=4 runs this)
#
# Environment (defaults in brackets):
#   WORKERS [2]              Streamlit worker processes, on 127.0.0.1:WORKER_PORT, WORKER_PORT+1, ...
#   PORT [8500]              nginx's port
#   ADDRESS [127.0.0.1]      nginx's address (loopback only by default; 0.0.0.0 inside a container)
#   WORKER_PORT [8601]       the first worker's port
#   PYTHON [.venv/bin/python, else python3]
#   NGINX [nginx on PATH, else /usr/sbin/nginx]
#   STATIC_CACHE [.cache/nginx-static]   where Streamlit's static files are copied and pre-compressed
#   STREAMLIT_SERVER_COOKIE_SECRET [random per start]   shared by all workers (set it alike on every replica)
set -euo pipefail
cd "$(dirname "$0")/.."

WORKERS=${1:-${WORKERS:-2}}
PORT=${PORT:-8500}
ADDRESS=${ADDRESS:-127.0.0.1}
WORKER_PORT=${WORKER_PORT:-8601}
if [ -z "${PYTHON:-}" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
[ -x "$NGINX" ] || { echo "serve.sh: nginx not found; \`make nginx\` installs Debian's package" >&2; exit 1; }
case $WORKERS in '' | *[!0-9]* | 0) echo "serve.sh: WORKERS must be a positive integer" >&2; exit 1 ;; esac

PREFIX=$(mktemp -d "${TMPDIR:-/tmp}/lesson-nginx.XXXXXX")
chmod 755 "$PREFIX"  # nginx's workers run as nobody when started as root
pids=()
cleanup() {
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$PREFIX"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# One cookie secret for every worker (Streamlit draws one per process otherwise), so that the XSRF cookie a
# viewer got from one worker is still valid if that viewer is moved to another (a worker that stopped).
# Passed through the environment, not the command line, so that it does not show in `ps`.
export STREAMLIT_SERVER_COOKIE_SECRET=${STREAMLIT_SERVER_COOKIE_SECRET:-$("$PYTHON" -c 'import secrets; print(secrets.token_hex(32))')}

ports=()
for ((i = 0; i < WORKERS; i++)); do
  port=$((WORKER_PORT + i))
  ports+=("$port")
  "$PYTHON" -m streamlit run app.py --server.port "$port" --server.address 127.0.0.1 --server.headless true \
    >"$PREFIX/worker-$port.log" 2>&1 &
  pids+=("$!")
done

# Pre-compress the static files (once per Streamlit install) and render the config while the workers start.
STATIC_ROOT=$("$PYTHON" deploy/prepare.py --prefix "$PREFIX" --port "$PORT" --address "$ADDRESS" --workers "${ports[@]}")
echo "serve.sh: static files from $STATIC_ROOT"

# Wait until every worker answers its health check (60 s), or report the one that did not.
if ! "$PYTHON" - "${ports[@]}" <<'EOF'
import sys, time, urllib.request
deadline = time.monotonic() + 60
for port in sys.argv[1:]:
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            sys.exit(f"serve.sh: worker on port {port} is not healthy after 60 s")
        time.sleep(0.2)
EOF
then
  for port in "${ports[@]}"; do tail -n 20 "$PREFIX/worker-$port.log" >&2 || true; done
  exit 1
fi
echo "serve.sh: ${WORKERS} workers healthy on 127.0.0.1:${ports[0]}..${ports[-1]}"

"$NGINX" -p "$PREFIX" -c "$PREFIX/nginx.conf" -e stderr -g 'daemon off;' &
pids+=("$!")
echo "serve.sh: nginx serving http://${ADDRESS}:${PORT} (Ctrl-C stops everything)"
# Returns when nginx or any worker exits (or on a signal); the EXIT trap stops the rest.
wait -n "${pids[@]}" || true
echo "serve.sh: a process exited; stopping" >&2
for port in "${ports[@]}"; do tail -n 5 "$PREFIX/worker-$port.log" >&2 || true; done
exit 1
