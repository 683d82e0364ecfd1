# The image for web, worker and beat (see docker-compose.yml).
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DJANGO_SETTINGS_MODULE=nvmedb.settings.production \
    NVMEDB_VAR_DIR=/var/lib/nvmedb
RUN useradd --system --create-home --home-dir /app nvmedb
WORKDIR /app
COPY requirements.txt ./
COPY client ./client
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
# The client wheel the site serves at /client/, built into $NVMEDB_VAR_DIR/client (the NVMEDB_CLIENT_WHEEL_DIR default;
# a deployment that sets NVMEDB_CLIENT_WHEEL_DIR elsewhere runs scripts/build-client-wheel.sh there itself).
RUN pip install --no-cache-dir "$(grep '^build==' requirements-dev.txt)" && bash scripts/build-client-wheel.sh
RUN SECRET_KEY=collectstatic DATABASE_URL=sqlite:////tmp/x REDIS_URL=redis://unused \
    python manage.py collectstatic --noinput \
 && mkdir -p /var/lib/nvmedb/beat && chown -R nvmedb /var/lib/nvmedb
USER nvmedb
EXPOSE 8000
CMD ["gunicorn", "-c", "gunicorn.conf.py", "nvmedb.wsgi"]
