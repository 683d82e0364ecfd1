"""A worker killed with SIGKILL in the middle of the ingest transaction leaves no rows; a re-run completes."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from django.db import connection

from analysis.ingest import ingest_submission
from analysis.models import Measurement, PcieLink, TestRun
from analysis.tests import bundles

REPO = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import sys, time, uuid
    import django
    django.setup()
    from nvmedb_client.bundle import verify_bundle
    from analysis.ingest import ingest_submission
    from analysis import dataset_rows
    from submissions.models import Submission

    from analysis.models import Measurement

    def pause(*args, **kwargs):
        # runs, rounds and measurements are written inside the transaction; nothing is committed
        print("MIDWAY", Measurement.objects.count(), flush=True)
        time.sleep(120)

    dataset_rows.window_row = pause
    bundle = verify_bundle(__import__("pathlib").Path(sys.argv[1]), extract_to=__import__("pathlib").Path(sys.argv[2]))
    ingest_submission(submission=Submission.objects.get(pk=uuid.UUID(sys.argv[3])), bundle=bundle)
    print("FINISHED", flush=True)
    """
)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_sigkill_mid_transaction_leaves_no_rows_and_a_rerun_completes(submission, tmp_path, shared_samples):
    bundle = bundles.verified_bundle(tmp_path / "b", shared_samples)
    archive = tmp_path / "b" / "b.nvmedb.tar.gz"
    db = connection.settings_dict
    env = dict(os.environ)
    env["DATABASE_URL"] = (
        f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}/{db['NAME']}"
    )
    env["DJANGO_SETTINGS_MODULE"] = "nvmedb.settings.test"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(archive), str(tmp_path / "child-extract"), str(submission.pk)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = child.stdout.readline()
        assert line.split() == ["MIDWAY", "15"], child.stderr.read()
        # the child's uncommitted rows exist only inside its transaction
        assert not TestRun.objects.filter(submission=submission).exists()
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()

    assert not TestRun.objects.filter(submission=submission).exists()
    assert not Measurement.objects.filter(test_run__submission=submission).exists()
    assert not PcieLink.objects.exists()

    outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status == "published"
    assert Measurement.objects.filter(test_run__submission=submission).count() == 15
