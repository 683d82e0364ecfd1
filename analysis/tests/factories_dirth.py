"""ECW/DIRTH rows for tests: a demand-intensity curve with its points, operating points and histogram buckets."""

from analysis.models import DemandIntensityCurve, DemandIntensityPoint, HistogramBucket, OperatingPoint, TestRun
from analysis.tests.factories import TestRunFactory

CELLS = ((2, 4), (2, 1), (1, 4), (1, 1))
IOPS = {(2, 4): 90_000.0, (2, 1): 50_000.0, (1, 4): 60_000.0, (1, 1): 20_000.0}


def dirth_run(**run_fields) -> TestRun:
    """A DIRTH test run whose curve holds a 2 x 2 TC x QD grid, MaxIOPS at TC 2/QD 4, MidIOPS at TC 2/QD 1 and
    MinIOPS at TC 1/QD 1, each with a three-bucket histogram."""
    run = TestRunFactory(test="dirth", threads=2, iodepth=4, **run_fields)
    add_results(run)
    return run


def add_results(run: TestRun) -> DemandIntensityCurve:
    """The curve, operating points and histograms of dirth_run, on `run`."""
    curve = DemandIntensityCurve.objects.create(test_run=run, round_number=5, round_basis="steady round")
    for tc, qd in CELLS:
        iops = IOPS[(tc, qd)]
        DemandIntensityPoint.objects.create(
            curve=curve, threads=tc, iodepth=qd, outstanding_ios=tc * qd, total_iops=iops,
            lat_mean_ns=tc * qd / iops * 1e9, lat_p99999_ns=40 * tc * qd / iops * 1e9,
            run_key=f"dirth-r05-tc{tc:02d}-qd{qd:02d}",
        )  # fmt: skip
    for name, (tc, qd) in (("max", (2, 4)), ("mid", (2, 1)), ("min", (1, 1))):
        point = OperatingPoint.objects.create(
            curve=curve, name=name, threads=tc, iodepth=qd, total_iops=IOPS[(tc, qd)], latency_kind="lat",
            total_ios=600, run_key=f"dirth-r05-tc{tc:02d}-qd{qd:02d}", histogram_source="capture",
            histogram_run_key=f"dirth-capture-{name}",
        )  # fmt: skip
        HistogramBucket.objects.bulk_create(
            [
                HistogramBucket(operating_point=point, lower_ns=50_000, upper_ns=63_000, io_count=100),
                HistogramBucket(operating_point=point, lower_ns=63_000, upper_ns=80_000, io_count=450),
                HistogramBucket(operating_point=point, lower_ns=100 * 10**9, upper_ns=None, io_count=50),
            ]
        )
    return curve
