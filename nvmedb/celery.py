import os

from celery import Celery
from celery.signals import worker_init, worker_ready
from django.conf import settings

from nvmedb.collector import freeze_long_lived

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nvmedb.settings.local")

app = Celery("nvmedb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def requeue_once_the_dead_leases_lapse(**kwargs):
    """A starting worker (perhaps replacing one that was killed) looks for submissions left in a dead worker's hands
    as soon as that worker's lease can have lapsed (submissions.leases), not at the next periodic requeue."""
    app.send_task("submissions.tasks.requeue_stranded", countdown=settings.NVMEDB_VALIDATION_LEASE_S + 2)


@worker_init.connect
def import_the_fit_libraries(**kwargs):
    """The factor refit's statistics libraries are imported once as the worker starts (its pool's processes inherit
    them), not by the first refit each process runs: about 0.6 s that a web process, which never fits, never pays."""
    # why: only a worker fits; the web processes and the client never import these
    import scipy.special  # noqa: F401
    import statsmodels.regression.linear_model  # noqa: F401

    freeze_long_lived()  # what the worker holds for life is never walked by a collection again (nvmedb.collector)
