import os

# One BLAS thread per process, unless the deployment says otherwise: the factor fits (analysis.factor_model) solve
# small least-squares problems (units × factors), where OpenBLAS's threads only contend with the other worker and web
# processes on the same cores (a 1,000-submission drive's refit took 2-3× the CPU with them). Set before numpy loads.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from nvmedb.celery import app as celery_app  # noqa: E402 -- after the thread limits, which numpy reads on import

__all__ = ["celery_app"]
