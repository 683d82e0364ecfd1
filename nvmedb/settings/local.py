from nvmedb.settings.base import *  # noqa: F403
