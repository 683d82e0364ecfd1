import os

from celery import Celery
from celery.signals import worker_ready
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nvmedb.settings.local")

app = Celery("nvmedb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def requeue_once_the_dead_leases_lapse(**kwargs):
    """A starting worker (perhaps replacing one that was killed) looks for submissions left in a dead worker's hands
    as soon as that worker's lease can have lapsed (submissions.leases), not at the next periodic requeue."""
    app.send_task("submissions.tasks.requeue_stranded", countdown=settings.NVMEDB_VALIDATION_LEASE_S + 2)
