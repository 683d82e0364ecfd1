"""The compiled (fast) manifest check and the full jsonschema listing must agree on every manifest.

`manifest_errors` trusts the fast validator's "valid"; if the two ever disagreed, a hostile manifest could pass. So
every mutation of a real factory manifest (each key removed, each value replaced by values of other types, extra keys
added at each level) is judged by both.
"""

import copy

import pytest

import bundle_factory
from nvmedb_client.bundle import _schema_validators, manifest_errors
from nvmedb_client.bundle_format import inline_refs, manifest_schema

REPLACEMENTS = (None, True, -1, 0, 2**70, 1.5, "", "x" * 300, "../etc", [], [1], {}, {"unexpected": 1})


@pytest.fixture(scope="module")
def manifest(tmp_path_factory, shared_samples):
    _, manifest, files = bundle_factory.make_run_dir(
        tmp_path_factory.mktemp("m"), bundle_factory.default_fio_samples(shared_samples)[:3]
    )
    manifest["files"] = [{"path": name, "size": 1, "sha256": "0" * 64} for name in sorted(files)]
    return manifest


def paths(value, prefix=()):
    """Every (path, value) in a JSON document, containers included; lists contribute their first item only."""
    yield prefix, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list) and value:
        yield from paths(value[0], (*prefix, 0))


def mutations(manifest):
    for path, value in paths(manifest):
        if not path:
            continue
        parent = manifest
        for step in path[:-1]:
            parent = parent[step]
        for replacement in REPLACEMENTS:
            if replacement != value:
                yield path, "replace", replacement
        if isinstance(parent, dict):
            yield path, "remove", None
        if isinstance(value, dict):
            yield path, "add", None


def mutated(manifest, path, how, replacement):
    copy_ = copy.deepcopy(manifest)
    parent = copy_
    for step in path[:-1]:
        parent = parent[step]
    if how == "replace":
        parent[path[-1]] = copy.deepcopy(replacement)
    elif how == "remove":
        del parent[path[-1]]
    else:
        parent[path[-1]]["an_unknown_key"] = 1
    return copy_


def test_the_factory_manifest_is_valid_for_both(manifest):
    full, fast = _schema_validators()
    fast(manifest)
    assert list(full.iter_errors(manifest)) == []
    assert manifest_errors(manifest) == []


def test_both_validators_agree_on_every_mutation(manifest):
    full, fast = _schema_validators()
    checked = rejected = 0
    for path, how, replacement in mutations(manifest):
        candidate = mutated(manifest, path, how, replacement)
        full_valid = not list(full.iter_errors(candidate))
        try:
            fast(candidate)
            fast_valid = True
        except Exception:
            fast_valid = False
        assert fast_valid == full_valid, (path, how, replacement)
        checked += 1
        rejected += not full_valid
    assert checked > 500 and rejected > checked // 2, (checked, rejected)


def test_an_invalid_manifest_gets_the_full_list_of_errors(manifest):
    candidate = mutated(manifest, ("profile",), "replace", "fast")
    del candidate["timing"]
    errors = manifest_errors(candidate)
    assert len(errors) == 2 and any("profile" in e for e in errors) and any("timing" in e for e in errors), errors


def with_resume_and_cache_facts(manifest):
    newer = copy.deepcopy(manifest)
    newer["compliance"]["tests"] = {"iops": ["write cache at test end: the drive reports its write cache enabled"]}
    newer["interruptions"] = [
        {"started_at": "2026-11-23T10:00:00.5Z", "resumed_at": "2026-11-23T10:05:00Z", "length_s": 299.5,
         "block": "iops", "stage": "rounds", "round": 3, "action": "restart", "reason": "inside round 3",
         "superseded_runs": ["iops-wipc"]}
    ]  # fmt: skip
    newer["write_cache_checks"] = [
        {"block": "iops", "when": "test end", "at": "2026-11-23T10:00:00Z", "value": 1, "enabled": True,
         "wanted_enabled": False, "problem": "the drive reports its write cache enabled"}
    ]  # fmt: skip
    return newer


def test_manifests_without_the_resume_and_cache_keys_stay_valid_and_with_them_are_checked(manifest):
    assert "interruptions" not in manifest and manifest_errors(manifest) == []
    newer = with_resume_and_cache_facts(manifest)
    assert manifest_errors(newer) == []
    for path, value in (
        (("interruptions", 0, "length_s"), -1),
        (("interruptions", 0, "action"), "ignored"),
        (("write_cache_checks", 0, "enabled"), "yes"),
        (("compliance", "tests", "iops"), "not a list"),
    ):
        assert manifest_errors(mutated(newer, path, "replace", value)), path


def test_both_validators_agree_on_every_mutation_of_the_new_keys(manifest):
    full, fast = _schema_validators()
    newer = with_resume_and_cache_facts(manifest)
    for path, how, replacement in mutations(newer):
        if path[0] not in ("interruptions", "write_cache_checks", "compliance"):
            continue
        candidate = mutated(newer, path, how, replacement)
        full_valid = not list(full.iter_errors(candidate))
        try:
            fast(candidate)
            fast_valid = True
        except Exception:
            fast_valid = False
        assert fast_valid == full_valid, (path, how, replacement)


def refs(node) -> list[str]:
    if isinstance(node, dict):
        return ([node["$ref"]] if "$ref" in node else []) + [r for value in node.values() for r in refs(value)]
    if isinstance(node, list):
        return [r for item in node for r in refs(item)]
    return []


def test_the_compiled_check_reads_a_schema_without_references():
    schema = manifest_schema()
    inlined = inline_refs(schema)
    assert len(refs(schema)) > 30
    without_defs = {key: value for key, value in inlined.items() if key != "$defs"}
    assert refs(without_defs) == []  # every file and run checked inline, no function call per item
    assert inlined["properties"]["files"]["items"] == inline_refs(schema)["$defs"]["file"]


def test_a_definition_that_refers_to_itself_keeps_its_reference():
    import fastjsonschema

    node = {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}, "n": {"type": "integer"}}}
    schema = {"$defs": {"node": node}, "type": "object", "properties": {"root": {"$ref": "#/$defs/node"}}}
    inlined = inline_refs(schema)
    assert inlined["properties"]["root"]["properties"]["child"] == {"$ref": "#/$defs/node"}
    check = fastjsonschema.compile({**inlined, "$schema": "http://json-schema.org/draft-07/schema#"})
    check({"root": {"n": 1, "child": {"n": 2, "child": {}}}})
    with pytest.raises(fastjsonschema.JsonSchemaException):
        check({"root": {"n": 1, "child": {"child": {"n": "deep"}}}})


def test_a_reference_beside_other_keywords_is_left_as_it_is():
    schema = {"$defs": {"a": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/a", "maxLength": 3}}}
    assert inline_refs(schema)["properties"]["x"] == {"$ref": "#/$defs/a", "maxLength": 3}
