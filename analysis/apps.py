from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # why: an AppConfig imports models only once the registry is ready
        from analysis import intake_hooks

        # why: the read side listens to the write side's changes; its modules load models, ready only now
        from analysis.drive_changes import drive_data_changed

        # why: analysis.tasks imports page code and models, which load only once the app registry is ready
        from analysis.tasks import queue_factor_refit, queue_page_summary

        intake_hooks.register()
        drive_data_changed.connect(queue_page_summary, dispatch_uid="analysis.page-summary")
        drive_data_changed.connect(queue_factor_refit, dispatch_uid="analysis.factor-refit")
