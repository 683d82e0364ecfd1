from django.urls import path

from submissions import views

app_name = "submissions"

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("profile/", views.profile, name="profile"),
    path("profile/tokens/", views.token_create, name="token-create"),
    path("profile/tokens/<int:token_id>/", views.token_update, name="token-update"),
    path("profile/keys/", views.key_add, name="key-add"),
    path("profile/keys/<int:key_id>/revoke/", views.key_revoke, name="key-revoke"),
    path("submissions/upload/", views.upload, name="upload"),
    path("submissions/<uuid:submission_id>/", views.detail, name="detail"),
    path("submissions/<uuid:submission_id>/withdraw/", views.withdraw, name="withdraw"),
]
