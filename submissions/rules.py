"""The rules a submission can fail, each with the sentence shown to its contributor."""

RULES: dict[str, str] = {
    # Archive and manifest checks (codes of nvmedb_client.bundle.BundleError).
    "not_an_archive": "The upload is not a gzip-compressed tar archive.",
    "unsafe_path": "An archive member has an absolute path or a '..' component.",
    "link_member": "The archive contains a symbolic or hard link; only regular files and directories are allowed.",
    "special_member": "The archive contains a device, FIFO or other special file.",
    "too_large": "The archive unpacks to more bytes than the site allows.",
    "too_many_files": "The archive holds more files than the site allows.",
    "compression_ratio": "The archive expands far more than real results do (a decompression bomb).",
    "bad_manifest": "The manifest is missing, malformed, or does not match the bundle schema.",
    "duplicate_member": "The archive holds the same path more than once.",
    "missing_file": "A file listed in the manifest is missing from the archive.",
    "extra_file": "The archive holds a file that the manifest does not list.",
    "size_mismatch": "A file's size does not match the manifest: the bundle was altered after it was signed.",
    "hash_mismatch": "A file's SHA-256 does not match the manifest: the bundle was altered after it was signed.",
    "bad_signature": "The manifest's Ed25519 signature is not valid.",
    # Key checks made by the site.
    "untrusted_key": "The bundle is signed by a key that is not registered to your account.",
    "unknown_key": "The bundle is signed by a key that is not registered to your account.",
    "revoked_key": "The bundle is signed by a key that you revoked.",
    "foreign_key": "The bundle is signed by a key registered to another account.",
    # Attribution: a measurement is published once, under the account that ran it.
    "content_of_another_account": "These fio outputs were first received from another contributor.",
    "near_duplicate": "Most of these measurements match, within rounding, a submission another contributor sent first.",
    "copy_withdrawn": "Withdrawn: a copy of a submission another contributor sent first.",
    # Site-side outcomes.
    "moderation": "Staff rejected this submission.",
    "timeout": "Validation took longer than the site allows.",
    "ingest": "The dataset refused the results.",
    "review": "A new contributor's first submissions are published after staff review them.",
    "unreadable": "The site could not read the bundle: a file in it has a shape no check expected.",
}


def rule_sentence(code: str) -> str:
    return RULES.get(code, f"The bundle failed the check {code!r}.")
