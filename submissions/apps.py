from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "submissions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from submissions import lookups  # noqa: F401  # why: registers CharField's `any_of` lookup once apps load
