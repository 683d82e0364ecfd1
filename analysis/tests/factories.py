"""factory-boy factories for the dataset, for the browse pages, exports and benchmarks that build on it.

`iops_run(...)` makes one published PTS IOPS test run with every cell of every round (bulk-created), the shape a
real ingest produces; the other factories make single rows.
"""

from __future__ import annotations

import hashlib
import itertools

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone

from analysis.models import (
    DriveModel,
    DriveModelAggregate,
    Firmware,
    Flag,
    Host,
    Measurement,
    PcieLink,
    PhysicalUnit,
    Round,
    SteadyStateWindow,
    TestRun,
    Vendor,
)

IOPS_MIXES = (100, 95, 65, 50, 35, 5, 0)
IOPS_BLOCK_SIZES = (1048576, 131072, 65536, 32768, 16384, 8192, 4096, 512)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"contributor{n}")


class SubmissionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "submissions.Submission"

    uploader = factory.SubFactory(UserFactory)
    sha256 = factory.Sequence(lambda n: hashlib.sha256(f"submission-{n}".encode()).hexdigest())
    size = 123_456
    storage_name = factory.LazyAttribute(lambda o: f"bundles/{o.sha256}.nvmedb.tar.gz")
    status = "published"
    published_at = factory.LazyFunction(timezone.now)


class VendorFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Vendor
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"Vendor {n}")
    slug = factory.LazyAttribute(lambda o: o.name.lower().replace(" ", "-"))


class DriveModelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DriveModel

    vendor = factory.SubFactory(VendorFactory)
    model_number = factory.Sequence(lambda n: f"SSD {n} 1TB")
    name = factory.LazyAttribute(lambda o: f"{o.vendor.name} {o.model_number}")
    slug = factory.Sequence(lambda n: f"drive-{n}")
    capacity_bytes = 1_000_204_886_016
    interface = "nvme"
    form_factor = "M.2 2280"


class FirmwareFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Firmware
        django_get_or_create = ("drive_model", "revision")

    drive_model = factory.SubFactory(DriveModelFactory)
    revision = "1B2QEXM7"


class PhysicalUnitFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PhysicalUnit

    drive_model = factory.SubFactory(DriveModelFactory)
    serial_hash = factory.Sequence(lambda n: hashlib.sha256(f"unit-{n}".encode()).hexdigest())


class HostFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Host
        django_get_or_create = ("fingerprint",)

    fingerprint = factory.Sequence(lambda n: hashlib.sha256(f"host-{n}".encode()).hexdigest())
    cpu_model = "AMD EPYC 7302P 16-Core Processor"
    cpu_count = 32
    memory_bytes = 128 * 1024**3
    os_name = "Debian GNU/Linux 12 (bookworm)"
    kernel = "6.1.0-13-amd64"
    architecture = "x86_64"


class PcieLinkFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PcieLink

    pci_address = "0000:01:00.0"
    capable_speed_gts = 16.0
    capable_width = 4
    speed_gts = 16.0
    width = 4
    generation = 4
    max_payload_bytes = 256
    max_read_request_bytes = 512
    path_speed_gts = 16.0
    path_width = 4
    raw_bandwidth_bytes_per_s = 16e9 * 4 * 128 / 130 / 8
    usable_bandwidth_bytes_per_s = 16e9 * 4 * 128 / 130 / 8 * 256 / 280
    below_capability = False
    source_file = "system/lspci.txt"


class TestRunFactory(factory.django.DjangoModelFactory):
    __test__ = False

    class Meta:
        model = TestRun

    submission = factory.SubFactory(SubmissionFactory)
    drive_model = factory.SubFactory(DriveModelFactory)
    firmware = factory.SubFactory(FirmwareFactory, drive_model=factory.SelfAttribute("..drive_model"))
    unit = factory.SubFactory(PhysicalUnitFactory, drive_model=factory.SelfAttribute("..drive_model"))
    host = factory.SubFactory(HostFactory)
    pcie_link = factory.SubFactory(PcieLinkFactory)
    test = "iops"
    edition = "enterprise"
    profile = "pts"
    compliant = True
    threads = 4
    iodepth = 32
    target_kind = "device"
    active_range_bytes = 1_000_204_886_016
    write_cache = "disabled"
    purge_method = "format-crypto-erase"
    fio_version = "fio-3.33"
    ioengine = "libaio"
    scheduler = "none"
    signed = True
    steady = True
    steady_round = 5


class RoundFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Round

    test_run = factory.SubFactory(TestRunFactory)
    phase = "wdpc"
    number = factory.Sequence(lambda n: n + 1)


class MeasurementFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Measurement

    round = factory.SubFactory(RoundFactory)
    test_run = factory.SelfAttribute("round.test_run")
    drive_model = factory.SelfAttribute("test_run.drive_model")
    run_key = factory.Sequence(lambda n: f"iops-r01-rw065-bs4096-{n}")
    block_size_bytes = 4096
    read_pct = 65
    threads = 4
    iodepth = 32
    read_iops = 300_000.0
    write_iops = 160_000.0
    total_iops = 460_000.0
    read_bw_bytes_per_s = factory.LazyAttribute(lambda o: o.read_iops * o.block_size_bytes)
    write_bw_bytes_per_s = factory.LazyAttribute(lambda o: o.write_iops * o.block_size_bytes)
    total_bw_bytes_per_s = factory.LazyAttribute(lambda o: o.read_bw_bytes_per_s + o.write_bw_bytes_per_s)
    lat_mean_ns = 280_000.0
    lat_max_ns = 9_000_000.0
    lat_p99_ns = 900_000.0
    lat_p9999_ns = 3_000_000.0
    runtime_s = 60.0
    temperature_before_k = 318.0
    temperature_after_k = 331.0
    raw_file = factory.LazyAttribute(lambda o: f"fio/{o.run_key}.json")
    json_path = "$.jobs[*]"


class SteadyStateWindowFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SteadyStateWindow

    test_run = factory.SubFactory(TestRunFactory)
    variable = "iops.total_iops.rw000.bs4096"
    phase = "wdpc"
    metric = "total_iops"
    block_size_bytes = 4096
    read_pct = 0
    first_round = 1
    last_round = 5
    rounds = [1, 2, 3, 4, 5]
    values = [101_000.0, 99_000.0, 100_000.0, 100_500.0, 99_500.0]
    average = 100_000.0
    data_excursion = 2_000.0
    data_excursion_limit = 20_000.0
    slope = -50.0
    intercept = 100_150.0
    slope_excursion = 200.0
    slope_excursion_limit = 10_000.0
    steady = True
    steady_round = 5


class FlagFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Flag

    submission = factory.SelfAttribute("test_run.submission")
    test_run = factory.SubFactory(TestRunFactory)
    kind = "bus_bound"
    reason = "Moved 95% of the 3.60 GB/s a Gen3 x4 link can carry: the bus, not the drive, set this number."


class DriveModelAggregateFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DriveModelAggregate

    drive_model = factory.SubFactory(DriveModelFactory)
    metric = "iops_4k_read"
    factor = "all"
    level = ""
    median = 500_000.0
    q1 = 480_000.0
    q3 = 520_000.0
    iqr = 40_000.0
    n_runs = 5
    n_units = 3
    n_contributors = 2


def iops_run(
    *, rounds: int = 5, mixes=IOPS_MIXES, block_sizes=IOPS_BLOCK_SIZES, scale: float = 1.0, **run_fields
) -> TestRun:
    """A PTS IOPS test run with every cell of every round, bulk-created; values follow a plausible drive curve."""
    run = TestRunFactory(steady_round=rounds, **run_fields)
    round_rows = Round.objects.bulk_create([Round(test_run=run, phase="wdpc", number=n) for n in range(1, rounds + 1)])
    rows = []
    for round_row, mix, bs in itertools.product(round_rows, mixes, block_sizes):
        total = (
            scale * 800_000 * (4096 / max(bs, 4096)) ** 0.8 * (0.4 + 0.6 * mix / 100) * (1 + 0.01 * round_row.number)
        )
        read = total * mix / 100
        rows.append(
            Measurement(
                round=round_row,
                test_run=run,
                drive_model=run.drive_model,
                run_key=f"iops-r{round_row.number:02d}-rw{mix:03d}-bs{bs}",
                block_size_bytes=bs,
                read_pct=mix,
                threads=run.threads,
                iodepth=run.iodepth,
                read_iops=read,
                write_iops=total - read,
                total_iops=total,
                read_bw_bytes_per_s=read * bs,
                write_bw_bytes_per_s=(total - read) * bs,
                total_bw_bytes_per_s=total * bs,
                lat_mean_ns=run.threads * run.iodepth / total * 1e9,
                runtime_s=60.0,
                in_steady_window=round_row.number > rounds - 5,
                raw_file=f"fio/iops-r{round_row.number:02d}-rw{mix:03d}-bs{bs}.json",
                json_path="$.jobs[*]",
            )
        )
    Measurement.objects.bulk_create(rows, batch_size=2000)
    return run
