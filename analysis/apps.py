from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # why: an AppConfig imports models only once the registry is ready
        from analysis import intake_hooks

        intake_hooks.register()
