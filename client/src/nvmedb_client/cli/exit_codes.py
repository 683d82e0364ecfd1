"""Named exit codes shared by every subcommand, so scripts can tell failures apart."""

OK = 0
FAILURE = 1  # click's own code for ClickException
USAGE = 2  # click's own code for bad flags
VERIFY_FAILED = 3
UNSAFE_TARGET = 4
MISSING_TOOL = 5
INTERRUPTED = 130
