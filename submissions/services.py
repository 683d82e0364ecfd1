"""The public names of intake's services, from the modules that hold them: accounts and tokens (accounts), signing
keys (keys), receiving a bundle (receiving), validation (pipeline), and moderation (moderation). Views, APIs, tasks
and commands may import either."""

from submissions.accounts import (
    TOKEN_DISPLAY_CHARS,
    TOKEN_PREFIX,
    api_token_create,
    api_token_rename,
    api_token_revoke,
    api_token_touch,
    contributor_sign_up,
    data_license_accept,
    token_digest,
    user_create,
)
from submissions.keys import (
    KEY_OF_ANOTHER_ACCOUNT,
    InvalidPublicKey,
    KeyCheck,
    KeyOfAnotherAccount,
    check_public_key,
    check_signing_key,
    public_key_fingerprint,
    signing_key_register,
    signing_key_revoke,
)
from submissions.moderation import (
    NotApprovable,
    submission_approve,
    submission_hide,
    submission_reject,
    submission_withdraw,
)
from submissions.pipeline import (
    TRANSIENT_ERRORS,
    submission_fingerprint_stored,
    submission_time_out,
    submission_validate,
    verify_stored_bundle,
)
from submissions.receiving import EmptyUpload, IncompleteUpload, NotGzip, submission_create
from submissions.tasks import submission_enqueue

__all__ = [
    "KEY_OF_ANOTHER_ACCOUNT",
    "TOKEN_DISPLAY_CHARS",
    "TOKEN_PREFIX",
    "TRANSIENT_ERRORS",
    "EmptyUpload",
    "IncompleteUpload",
    "InvalidPublicKey",
    "KeyCheck",
    "KeyOfAnotherAccount",
    "NotApprovable",
    "NotGzip",
    "api_token_create",
    "api_token_rename",
    "api_token_revoke",
    "api_token_touch",
    "check_public_key",
    "check_signing_key",
    "contributor_sign_up",
    "data_license_accept",
    "public_key_fingerprint",
    "signing_key_register",
    "signing_key_revoke",
    "submission_approve",
    "submission_create",
    "submission_enqueue",
    "submission_fingerprint_stored",
    "submission_hide",
    "submission_reject",
    "submission_time_out",
    "submission_validate",
    "submission_withdraw",
    "token_digest",
    "user_create",
    "verify_stored_bundle",
]
