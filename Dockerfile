# syntax=docker/dockerfile:1
# The runtime image of function-modelplane (embedded into the xpkg by `make package`).
#
# Both stages start from the same official Python image, defined once below: the venv built in
# the first stage records the interpreter's absolute path (/usr/local/bin/python3.11), so the
# final stage must carry that very interpreter. 3.11 is the version the code is type-checked
# and linted for (pyproject: requires-python, pyright pythonVersion, ruff target-version), and
# every binary dependency (grpcio, cel-expr-python, pydantic-core) ships cp311 manylinux wheels
# for amd64 and arm64, so nothing is compiled here.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_ROOT_USER_ACTION=ignore
WORKDIR /src
COPY pyproject.toml ./
COPY lib ./lib
COPY functions ./functions
# Install the wheel, not the source tree, so the image holds exactly what a user's pip would.
# The venv has no pip of its own: the build stage's pip installs into it.
RUN python -m pip wheel --no-deps --wheel-dir /dist . \
    && python -m venv --without-pip /venv \
    && python -m pip --python /venv/bin/python install /dist/*.whl

FROM ${PYTHON_IMAGE}
COPY --from=build /venv /venv
ENV PATH="/venv/bin:${PATH}" PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
# The conventional "nonroot" uid/gid; the function needs no home directory and writes no files.
USER 65532:65532
# Crossplane dials functions on 9443 (in-cluster with TLS_SERVER_CERTS_DIR set; render passes
# --insecure as the container command, which lands after `serve`). ADDRESS keeps every interface:
# `serve --insecure` alone listens on 127.0.0.1, which a published container port cannot reach.
ENV ADDRESS=0.0.0.0:9443
EXPOSE 9443
ENTRYPOINT ["modelplane", "serve"]
