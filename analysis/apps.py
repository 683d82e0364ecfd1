from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from analysis.explain import explain_submission
        from analysis.selectors import trial_submission_q
        from submissions.explanations import register_explainer
        from submissions.private import register_private_filter

        # a trial's page is its contributor's own, and a trial is no evidence that its contributor can be trusted
        register_private_filter(trial_submission_q)
        # "why is my unit different?" on the submission page and in its API answer
        register_explainer(explain_submission)
        # why: the read side listens to the write side's changes; its modules load models, ready only now
        from analysis.drive_changes import drive_data_changed

        # why: analysis.tasks imports page code and models, which load only once the app registry is ready
        from analysis.tasks import queue_page_summary

        drive_data_changed.connect(queue_page_summary, dispatch_uid="analysis.page-summary")
