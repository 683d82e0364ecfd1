"""The data licence (CC BY 4.0) at sign-up: a required checkbox, recorded with a timestamp on the account."""

import pytest

from submissions.models import DataLicenseAcceptance

pytestmark = pytest.mark.django_db
FORM = {"username": "newcomer", "email": "", "password1": "a-long-passphrase-9", "password2": "a-long-passphrase-9"}


def test_the_sign_up_form_shows_the_licence(client):
    html = client.get("/signup/").content.decode()
    assert 'name="accept_data_license"' in html and "required" in html
    assert "CC-BY-4.0" in html and "MIT" in html


def test_sign_up_without_accepting_the_licence_creates_no_account(client, django_user_model):
    response = client.post("/signup/", FORM)
    assert response.status_code == 200
    assert "accept it to sign up" in response.content.decode()
    assert not django_user_model.objects.filter(username="newcomer").exists()
    assert not DataLicenseAcceptance.objects.exists()


def test_sign_up_records_the_acceptance_with_a_timestamp(client, django_user_model):
    response = client.post("/signup/", {**FORM, "accept_data_license": "on"})
    assert response.status_code == 302
    row = DataLicenseAcceptance.objects.get()
    assert row.user == django_user_model.objects.get(username="newcomer")
    assert (row.license, row.via) == ("CC-BY-4.0", "signup") and row.accepted_at is not None


def test_the_api_records_an_acceptance_from_the_client(owner_api, owner):
    response = owner_api.post("/api/v1/me/data-license/", {"license": "CC-BY-4.0"}, format="json")
    assert response.status_code == 201
    assert response.json()["license"] == "CC-BY-4.0" and response.json()["via"] == "client"
    assert DataLicenseAcceptance.objects.get().user == owner
    wrong = owner_api.post("/api/v1/me/data-license/", {"license": "CC0-1.0"}, format="json")
    assert wrong.status_code == 400 and wrong.json()["code"] == "invalid"


def test_accepting_the_licence_needs_a_token(anonymous_api):
    assert anonymous_api.post("/api/v1/me/data-license/", {"license": "CC-BY-4.0"}, format="json").status_code == 401


def test_staff_can_read_acceptances_but_not_change_them(client, staff, owner):
    from submissions import services

    row = services.data_license_accept(user=owner, via="signup")
    client.force_login(staff)
    assert "CC-BY-4.0" in client.get("/admin/submissions/datalicenseacceptance/").content.decode()
    assert client.post(f"/admin/submissions/datalicenseacceptance/{row.pk}/delete/", {"post": "yes"}).status_code == 403
    assert DataLicenseAcceptance.objects.filter(pk=row.pk).exists()
