#!/usr/bin/env bash
# Starts a task worker (with the periodic scheduler) and the site; Ctrl-C stops both.
# Without REDIS_URL the worker uses a broker kept in var/broker/, which needs no daemon.
set -euo pipefail
port="${1:-8000}"
py=".venv/bin/python"
"$py" -m celery -A nvmedb worker --beat --pool=solo --loglevel=INFO --schedule=var/celerybeat-schedule &
worker=$!
trap 'kill $worker 2>/dev/null; wait $worker 2>/dev/null' EXIT INT TERM
echo "nvmedb is starting at http://127.0.0.1:${port}/"
"$py" manage.py runserver "127.0.0.1:${port}"
