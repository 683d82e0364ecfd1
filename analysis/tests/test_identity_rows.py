"""Who a stored submission is about (analysis.identity_rows): a known drive is found with its vendor, a new one is
created under the vendor of its name, once."""

import pytest

from analysis.identity import DriveIdentity
from analysis.identity_rows import identity_rows
from analysis.models import DriveModel, Firmware, PhysicalUnit, Vendor
from analysis.records import SubmissionRecord
from analysis.tests.factories import DriveModelFactory

pytestmark = pytest.mark.django_db

CAPACITY = 500 * 10**9


def _record(vendor: str = "Samsung", model_number: str = "SSD 970", pci_vendor_id: int | None = 0x144D):
    identity = DriveIdentity(
        vendor=vendor,
        pci_vendor_id=pci_vendor_id,
        name=f"{vendor} {model_number}",
        model_number=model_number,
        capacity_bytes=CAPACITY,
        firmware="1B2QEXM7",
        serial="S1",
    )
    return SubmissionRecord(source="client", identity=identity)


def test_a_known_drive_is_found_with_its_firmware_and_unit_and_nothing_is_created():
    first = identity_rows(_record())
    counts = [model.objects.count() for model in (Vendor, DriveModel, Firmware, PhysicalUnit)]
    again = identity_rows(_record())
    assert [row.pk for row in again] == [row.pk for row in first]
    assert again[0].vendor.name == "Samsung" and again[0].vendor.pci_vendor_id == 0x144D
    assert [model.objects.count() for model in (Vendor, DriveModel, Firmware, PhysicalUnit)] == counts


def test_a_new_model_of_a_known_vendor_is_created_under_that_vendor():
    known = DriveModelFactory(vendor__name="Samsung", model_number="SSD 980", capacity_bytes=CAPACITY)
    drive_model, _firmware, _unit = identity_rows(_record())
    assert drive_model.pk != known.pk and drive_model.vendor_id == known.vendor_id
    assert Vendor.objects.filter(name="Samsung").count() == 1


def test_the_same_model_number_and_capacity_of_another_vendor_is_another_drive():
    other = DriveModelFactory(vendor__name="Phison", model_number="SSD 970", capacity_bytes=CAPACITY)
    drive_model, _firmware, _unit = identity_rows(_record())
    assert drive_model.pk != other.pk and drive_model.vendor.name == "Samsung"
    assert identity_rows(_record(vendor="Phison", pci_vendor_id=None))[0].pk == other.pk
