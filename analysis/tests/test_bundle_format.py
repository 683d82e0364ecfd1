"""Format 2 bundles: the server finds system files by their declared kind, holds an undeclared one, and still reads
format-1 bundles by the client's old file names."""

import json

from analysis.ingest import ingest_submission
from analysis.models import Flag, TestRun
from analysis.tests.bundles import as_format_2


def _rename(old: str, new: str):
    """Give a system file a name no pattern of format 1 knows (another tool's natural name)."""

    def mutate(run_dir, manifest, files):
        (run_dir / old).rename(run_dir / new)
        files[files.index(old)] = new

    return mutate


def _both(*mutations):
    def mutate(run_dir, manifest, files):
        for change in mutations:
            change(run_dir, manifest, files)

    return mutate


def _published_run(submission, bundle):
    outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status == "published", outcome.reasons
    return TestRun.objects.get(submission=submission)


def test_a_format_2_bundle_publishes_the_same_drive_and_link_as_its_format_1_twin(submission, make_verified):
    from analysis.tests.test_ingest import _second_submission

    v1 = _published_run(submission, make_verified())
    v2 = _published_run(_second_submission(submission), make_verified(mutate=as_format_2))
    assert v2.drive_model == v1.drive_model and v2.drive_model.name != "Unknown drive"
    assert v2.pcie_link is not None
    assert (v2.pcie_link.generation, v2.pcie_link.width) == (v1.pcie_link.generation, v1.pcie_link.width)


def test_format_2_finds_files_by_their_declared_kind_whatever_their_names(submission, make_verified):
    renamed = _both(
        _rename("system/nvme-id-ctrl.json", "system/identify-controller.json"),
        _rename("system/lspci.txt", "system/pci-devices.txt"),
        _rename("system/facts.json", "system/host.json"),
        as_format_2,
    )

    def declare(run_dir, manifest, files):
        renamed(run_dir, manifest, files)
        kinds = {"identify-controller.json": "nvme-id-ctrl", "pci-devices.txt": "lspci-vvv", "host.json": "facts"}
        for entry in manifest["system"]["files"]:
            entry["kind"] = kinds[entry["path"].removeprefix("system/")]
        manifest["system"]["pci_path"] = ["0000:3b:00.0"]

    run = _published_run(submission, make_verified(mutate=declare))
    assert run.drive_model.name != "Unknown drive" and run.pcie_link is not None
    assert run.host.kernel == "5.10.0-23-amd64"


def test_format_1_reads_system_files_only_by_the_clients_old_names(submission, make_verified):
    run = _published_run(submission, make_verified(mutate=_rename("system/nvme-id-ctrl.json", "system/identify.json")))
    assert run.drive_model.name == "Unknown drive" and "id-ctrl" in run.missing["identity"]


def test_a_format_2_bundle_with_an_undeclared_system_file_is_held_with_the_reason(submission, make_verified):
    def sneak_in(run_dir, manifest, files):
        as_format_2(run_dir, manifest, files)
        (run_dir / "system" / "id-ctrl-other-drive.json").write_text(json.dumps({"mn": "Another drive"}))
        files.append("system/id-ctrl-other-drive.json")

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=sneak_in))
    assert outcome.status == "held"
    assert outcome.reasons == [
        "undeclared system file: system/id-ctrl-other-drive.json is under system/ but not declared in the manifest's "
        "system.files"
    ]
    assert Flag.objects.filter(submission=submission, kind="held_for_review", reason__contains="undeclared").exists()


def _pci_path_only_in_the_manifest(pci_path):
    def declare(run_dir, manifest, files):
        facts = json.loads((run_dir / "system" / "facts.json").read_text())
        facts["block_device"].pop("pci_path")
        (run_dir / "system" / "facts.json").write_text(json.dumps(facts))
        as_format_2(run_dir, manifest, files)
        manifest["system"]["pci_path"] = pci_path

    return declare


def test_the_declared_pci_path_picks_the_drive_among_several_controllers(submission, make_verified):
    # the shared lspci sample lists three NVMe controllers (3b, 3c and 3d:00.0)
    run = _published_run(submission, make_verified(mutate=_pci_path_only_in_the_manifest(["0000:3c:00.0"])))
    assert run.pcie_link is not None and run.pcie_link.pci_address.endswith("3c:00.0")


def test_without_a_pci_path_among_several_controllers_the_link_is_missing_with_the_reason(submission, make_verified):
    run = _published_run(submission, make_verified(mutate=_pci_path_only_in_the_manifest(None)))
    assert run.pcie_link is None
    assert run.missing["pcie_link"] == (
        "lspci lists 3 NVMe controllers and the bundle does not say which one was tested"
    )
