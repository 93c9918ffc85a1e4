# syntax=docker/dockerfile:1
# The LLM lesson explorer as one container: WORKERS Streamlit processes behind nginx (deploy/serve.sh), with
# sticky sessions and pre-compressed static files. See docs/drafts/deployment.md.
#
# NOT BUILT HERE: these machines have no Docker engine, so this file has never been built or run by the project.
#
#   docker build -t lesson-explorer .
#   docker run --rm -p 127.0.0.1:8500:8500 -e WORKERS=2 lesson-explorer      # then open http://127.0.0.1:8500
#
# Offline build from a wheelhouse in the build context (`make wheelhouse` on a machine with the same Python and
# platform as this image: CPython 3.11, manylinux x86_64):
#   docker build --build-arg PIP_INSTALL_ARGS="--no-index --find-links /ctx/wheelhouse" -t lesson-explorer .
FROM python:3.11-slim

# Debian's nginx; its service is never started here (serve.sh runs it in the foreground, as the app user).
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx \
    && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app

# torch from PyTorch's CPU-only index: PyPI's default Linux torch wheel pulls several GB of CUDA libraries.
ARG PIP_INSTALL_ARGS="--extra-index-url https://download.pytorch.org/whl/cpu"
# Dependencies first, in their own layer. The build context is mounted (not copied) for this step, so that an
# optional wheelhouse/ in it serves the offline build without landing in the image.
COPY pyproject.toml README.md LICENSE ./
RUN --mount=type=bind,source=.,target=/ctx pip install $PIP_INSTALL_ARGS ".[class]" && rm -rf build *.egg-info

COPY . .
# Pre-compress Streamlit's static files now (gzip -9 twins for nginx's gzip_static), not at every start.
RUN python deploy/prepare.py --prefix /tmp/nginx-prepare --workers 8601 && rm -rf /tmp/nginx-prepare \
    && useradd --system --no-create-home --home-dir /app app

USER app
# Inside the container nginx listens on all interfaces; the workers stay on the container's loopback.
ENV WORKERS=2 PORT=8500 ADDRESS=0.0.0.0 WORKER_PORT=8601 PYTHON=python HOME=/tmp
EXPOSE 8500
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8500/_stcore/health', timeout=4)"
# serve.sh traps SIGTERM (docker stop) and stops nginx and every worker.
CMD ["bash", "deploy/serve.sh"]
