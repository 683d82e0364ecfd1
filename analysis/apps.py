from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from analysis.selectors import is_trial_submission
        from submissions.selectors import register_private_check

        register_private_check(is_trial_submission)  # a trial's page is its contributor's own
