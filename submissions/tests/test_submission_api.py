"""GET and DELETE /api/v1/submissions/{id}/: who sees what, withdrawing, and the frozen JSON shape."""

import gzip
import uuid

from submissions import services
from submissions.models import Submission, SubmissionStatus
from submissions.tests.contract import assert_matches_contract


def upload(client, text="bundle") -> dict:
    response = client.post(
        "/api/v1/submissions/", data=gzip.compress(text.encode(), mtime=0), content_type="application/octet-stream"
    )
    assert response.status_code == 202, response.content
    return response.json()


def publish(submission_id) -> Submission:
    """Stands in for the pipeline's last step, which tests of the validation cover."""
    submission = Submission.objects.get(pk=submission_id)
    Submission.objects.filter(pk=submission.pk).update(
        status=SubmissionStatus.PUBLISHED,
        published_at=submission.created,
        finished_at=submission.created,
        report={"outcome": "published", "rule": "", "summary": "", "detail": "", "reasons": []},
    )
    return Submission.objects.get(pk=submission.pk)


def test_the_upload_answer_matches_the_contract(owner_api):
    assert_matches_contract("submission_created", upload(owner_api))


def test_the_owner_sees_their_submission_in_full(owner_api):
    created = upload(owner_api)
    response = owner_api.get(created["url"])
    assert response.status_code == 200
    assert response.json() == created
    assert_matches_contract("submission_owner", response.json())


def test_a_stranger_cannot_see_a_submission_that_is_not_published(owner_api, stranger_api, anonymous_api):
    created = upload(owner_api)
    for client in (stranger_api, anonymous_api):
        response = client.get(created["url"])
        assert response.status_code == 404
        assert response.json()["code"] == "not_found"


def test_everyone_sees_a_published_submission_without_private_fields(owner_api, stranger_api, anonymous_api):
    created = upload(owner_api)
    publish(created["id"])
    for client in (stranger_api, anonymous_api):
        response = client.get(created["url"])
        assert response.status_code == 200
        assert "original_name" not in response.json()
        assert "signing_key" not in response.json()
    assert_matches_contract("submission_public", anonymous_api.get(created["url"]).json())


def test_a_hidden_submission_is_only_shown_to_its_owner(owner_api, stranger_api, staff):
    created = upload(owner_api)
    submission = publish(created["id"])
    services.submission_hide(submission=submission, reason="serial number in a file name", by=staff)
    assert stranger_api.get(created["url"]).status_code == 404
    mine = owner_api.get(created["url"]).json()
    assert mine["hidden"] is True
    assert mine["moderation_reason"] == "serial number in a file name"


def test_an_unknown_id_is_not_found(owner_api):
    assert owner_api.get(f"/api/v1/submissions/{uuid.uuid4()}/").status_code == 404


def test_the_owner_withdraws_and_a_tombstone_keeps_the_id(owner_api, anonymous_api):
    created = upload(owner_api)
    publish(created["id"])
    response = owner_api.delete(created["url"])
    assert response.status_code == 200
    assert response.json()["status"] == "withdrawn"
    submission = Submission.objects.get(pk=created["id"])
    assert submission.status == SubmissionStatus.WITHDRAWN
    assert submission.withdrawn_at is not None
    tombstone = anonymous_api.get(created["url"])
    assert tombstone.status_code == 200
    assert_matches_contract("submission_tombstone", tombstone.json())
    assert [e.to_status for e in submission.events.all()][-1] == "withdrawn"


def test_withdrawing_twice_is_harmless(owner_api):
    created = upload(owner_api)
    assert owner_api.delete(created["url"]).status_code == 200
    assert owner_api.post(f"{created['url']}withdraw/").status_code == 200
    assert Submission.objects.get().events.filter(to_status="withdrawn").count() == 1


def test_a_withdrawn_submission_that_was_never_published_stays_private(owner_api, anonymous_api):
    created = upload(owner_api)
    owner_api.delete(created["url"])
    assert anonymous_api.get(created["url"]).status_code == 404


def test_a_stranger_cannot_withdraw(owner_api, stranger_api, anonymous_api):
    created = upload(owner_api)
    assert stranger_api.delete(created["url"]).status_code == 404
    assert anonymous_api.delete(created["url"]).status_code == 401
    assert Submission.objects.get().status == SubmissionStatus.RECEIVED


def test_the_list_shows_only_the_callers_submissions(owner_api, stranger_api):
    mine = upload(owner_api, "mine")
    upload(stranger_api, "theirs")
    assert [s["id"] for s in owner_api.get("/api/v1/submissions/").json()] == [mine["id"]]


def test_the_openapi_schema_describes_the_upload(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    post = schema["paths"]["/api/v1/submissions/"]["post"]
    assert set(post["requestBody"]["content"]) == {"application/octet-stream", "multipart/form-data"}
    assert {"202", "200", "413"} <= set(post["responses"])
    assert "tokenAuth" in schema["components"]["securitySchemes"]


def test_the_api_docs_page_loads(client):
    assert client.get("/api/docs/").status_code == 200
