"""gunicorn settings for the production web server (Dockerfile, docker-compose.yml): `gunicorn -c gunicorn.conf.py
nvmedb.wsgi`.

Threaded workers (gthread): a streamed export holds one thread for as long as the download lasts, so with sync workers
three exports occupied all three workers and a drive page waited 25.9 s behind them. Each worker process serves
GUNICORN_THREADS requests at once, pages between the chunks of the exports. A thread that streams does not stop its
worker's heartbeat, so `timeout` does not cut a long download short as it does a sync worker's.

Environment: GUNICORN_BIND (0.0.0.0:8000), GUNICORN_WORKERS (3), GUNICORN_THREADS (8), GUNICORN_TIMEOUT (120 s).
Each thread may hold one PostgreSQL connection: workers × threads must stay under the server's max_connections.
"""

from nvmedb.env import env_int, env_str

bind = env_str("GUNICORN_BIND", "0.0.0.0:8000")
workers = env_int("GUNICORN_WORKERS", 3)
worker_class = "gthread"
threads = env_int("GUNICORN_THREADS", 8)
timeout = env_int("GUNICORN_TIMEOUT", 120)
