# The dpci app for a class (docs/deploy-classroom.md). One image runs the Streamlit app, the Dask
# scheduler and its workers (compose.yaml), so all of them have the same Python, numpy, BLAS and dpci:
# a bootstrap chunk computed on a worker is then the number the server would have computed itself.
# No secret is baked in: DPCI_SECRET and the database's password come from the environment at run time.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONPATH=/app \
    DPCI_DATA_DIR=/data

WORKDIR /app

# dpci with the app, Dask and psycopg (pyproject.toml's "cluster" extra): the image serves every service.
# The versions are bounded in pyproject.toml, the one list of dependencies (hence DL3013 ignored).
COPY pyproject.toml README.md ./
COPY dpci/ dpci/
# hadolint ignore=DL3013
RUN pip install --no-cache-dir ".[cluster]"

# A user with no password and no rights on the code; the data directory is the one place it writes.
RUN groupadd --gid 10001 dpci \
    && useradd --no-log-init --create-home --uid 10001 --gid 10001 dpci \
    && mkdir /data \
    && chown 10001:10001 /data

COPY .streamlit/ .streamlit/
COPY sample_data/ sample_data/
COPY ui/ ui/
COPY pages/ pages/
COPY app.py ./

USER 10001:10001
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"]
CMD ["streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501", "--server.headless=true", "--server.fileWatcherType=none"]
