"""lshw -json parser against every dump in ../shared/samples/lshw/ (single object and array-wrapped)."""

import json

import pytest

from nvmedb_client.system.lshw import LshwParseError, parse_lshw


def _root(path):
    doc = json.loads(path.read_text())
    return doc[0] if isinstance(doc, list) else doc


def _nodes(node):
    yield node
    for child in node.get("children", []):
        yield from _nodes(child)


def test_every_sample_gives_the_system_cpu_and_memory_it_shows(shared_samples):
    paths = sorted((shared_samples / "lshw").iterdir())
    assert any(isinstance(json.loads(p.read_text()), list) for p in paths)  # both shapes are really covered
    assert any(isinstance(json.loads(p.read_text()), dict) for p in paths)
    for path in paths:
        root = _root(path)
        parsed = parse_lshw(path.read_text())
        assert parsed["system_product"] == root.get("product"), path.name
        assert parsed["system_vendor"] == root.get("vendor"), path.name
        cpus = [n for n in _nodes(root) if n.get("class") == "processor"]
        assert parsed["cpu_count"] == len(cpus), path.name
        assert parsed["cpu_model"] == cpus[0].get("product"), path.name
        for key in parsed["missing"]:
            assert parsed[key] is None


def test_a_two_socket_server_sums_cores_and_memory_banks(shared_samples):
    path = shared_samples / "lshw" / "Manouchehri__dl360p__lshw.json"
    root = _root(path)
    parsed = parse_lshw(path.read_text())
    banks = [
        n["size"]
        for n in _nodes(root)
        if n.get("class") == "memory" and n.get("id", "").startswith("bank") and "size" in n
    ]
    assert parsed["cpu_count"] == 2
    assert parsed["cpu_cores"] == 16 and parsed["cpu_threads"] == 32
    assert parsed["memory_bytes"] == sum(banks) == 16 * 16 * 1024**3
    assert parsed["board_product"] is None and "board_product" in parsed["missing"]


def test_translated_descriptions_and_an_array_wrapper(shared_samples):
    path = shared_samples / "lshw" / "sonnix-de__computerspende__lshw.json"
    assert "Systemspeicher" in path.read_text()
    parsed = parse_lshw(path.read_text())
    assert parsed["memory_bytes"] == 17179869184
    assert (parsed["board_vendor"], parsed["board_product"]) == ("FUJITSU", "FJNB253")
    assert (parsed["cpu_cores"], parsed["cpu_threads"]) == (2, 4)


def test_a_virtual_machine_without_vendor_records_what_is_missing(shared_samples):
    parsed = parse_lshw((shared_samples / "lshw" / "local__lshw-02.19__kvm_vm.json").read_bytes())
    assert parsed["system_vendor"] is None
    assert parsed["missing"]["system_vendor"] == "lshw reports no system vendor"
    assert parsed["cpu_model"] == "AMD EPYC"
    assert parsed["memory_bytes"] == 25769803776


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"id": "x"}'])
def test_it_refuses_output_that_is_not_lshw(text):
    with pytest.raises(LshwParseError):
        parse_lshw(text)
