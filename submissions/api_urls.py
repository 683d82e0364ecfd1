from django.urls import path

from submissions import apis

app_name = "submissions-api"

urlpatterns = [
    path("submissions/", apis.SubmissionListCreateApi.as_view(), name="list"),
    path("submissions/<uuid:submission_id>/", apis.SubmissionDetailApi.as_view(), name="detail"),
    path("submissions/<uuid:submission_id>/withdraw/", apis.SubmissionWithdrawApi.as_view(), name="withdraw"),
    path("keys/", apis.SigningKeyListCreateApi.as_view(), name="keys"),
    path("keys/challenge/", apis.SigningKeyChallengeApi.as_view(), name="key-challenge"),
    path("keys/<int:key_id>/", apis.SigningKeyRevokeApi.as_view(), name="key-revoke"),
    path("me/", apis.MeApi.as_view(), name="me"),
    path("me/data-license/", apis.DataLicenseAcceptApi.as_view(), name="data-license"),
]
