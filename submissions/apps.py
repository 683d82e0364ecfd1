from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "submissions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # why: registers CharField's `any_of` lookup (submissions.lookups), once the apps are loaded
        from submissions import lookups  # noqa: F401
