"""The intake API (v1): submissions, signing keys, and who a token belongs to."""

import base64
import binascii

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import APIException
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from nvmedb_client import data_license
from submissions import accounts, key_registration, keys, moderation, receiving, selectors
from submissions.authentication import HashedTokenAuthentication
from submissions.models import DataLicenseAcceptance, SigningKey
from submissions.serializers import (
    OUTPUT_BY_VISIBILITY,
    SubmissionListItemSerializer,
    SubmissionOutputSerializer,
)
from submissions.throttles import AuthAddressThrottle, AuthUserThrottle, UploadAddressThrottle, UploadUserThrottle
from submissions.upload import MULTIPART_OVERHEAD_BYTES, BundleTooLarge, LimitedTemporaryFileUploadHandler

MAX_KEY_REQUEST_BYTES = 16 * 1024
RAW_CONTENT_TYPES = {"", "application/octet-stream", "application/gzip", "application/x-gzip"}

ErrorSerializer = inline_serializer("Error", {"code": serializers.CharField(), "detail": serializers.CharField()})


def error(http_status: int, code: str, detail: str) -> Response:
    return Response({"code": code, "detail": detail}, status=http_status)


def too_large() -> Response:
    limit = settings.NVMEDB_MAX_BUNDLE_BYTES
    return error(413, "too_large", f"The bundle is larger than this site accepts ({limit} bytes).")


class IntakeApi(APIView):
    """Every error of these endpoints has the same shape: {"code": ..., "detail": ...}."""

    def handle_exception(self, exc: Exception) -> Response:
        response = super().handle_exception(exc)
        if isinstance(exc, APIException) and isinstance(response.data, dict) and "detail" in response.data:
            codes = exc.get_codes()
            response.data = {
                "code": codes if isinstance(codes, str) else "invalid",
                "detail": str(response.data["detail"]),
            }
        return response


class SubmissionListCreateApi(IntakeApi):
    """POST a bundle; GET your own submissions."""

    authentication_classes = [HashedTokenAuthentication]
    permission_classes = [IsAuthenticated]

    def get_throttles(self):
        if self.request.method == "POST":
            return [UploadUserThrottle(), UploadAddressThrottle()]
        return []

    @extend_schema(
        operation_id="submissions_list",
        responses=SubmissionListItemSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        submissions = selectors.submissions_of(request.user).select_related("signing_key")[:200]
        data = SubmissionListItemSerializer(submissions, many=True, context={"request": request}).data
        return Response(data)

    @extend_schema(
        operation_id="submissions_create",
        description=(
            "Send a bundle (.nvmedb.tar.gz) as the raw body (application/octet-stream) or as the file field "
            "`bundle` of a multipart form. 202: accepted and queued for validation. 200: you already sent this "
            "same bundle; your existing submission is returned. Duplicates are per account: a copy someone else "
            "sent never blocks yours."
        ),
        request={
            "application/octet-stream": OpenApiTypes.BINARY,
            "multipart/form-data": inline_serializer("BundleUpload", {"bundle": serializers.FileField()}),
        },
        responses={
            202: SubmissionOutputSerializer,
            200: SubmissionOutputSerializer,
            400: OpenApiResponse(ErrorSerializer, description="empty body, missing field, or not a gzip archive"),
            413: OpenApiResponse(ErrorSerializer, description="larger than the site's limit"),
            415: OpenApiResponse(ErrorSerializer),
            503: OpenApiResponse(
                ErrorSerializer,
                description="the database, queue or bundle storage is unavailable: nothing was kept; try again after "
                "the Retry-After header's seconds",
            ),
        },
    )
    def post(self, request: Request) -> Response:
        limit = settings.NVMEDB_MAX_BUNDLE_BYTES
        django_request = request._request
        content_type = django_request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
        try:
            length = int(django_request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return error(400, "bad_content_length", "The Content-Length header is not a number.")

        if content_type == "multipart/form-data":
            if length > limit + MULTIPART_OVERHEAD_BYTES:
                return too_large()
            django_request.upload_handlers = [LimitedTemporaryFileUploadHandler(django_request, limit=limit)]
            try:
                upload = django_request.FILES.get("bundle")
            except BundleTooLarge:
                return too_large()
            if upload is None:
                return error(400, "missing_bundle", "The multipart form has no file field named 'bundle'.")
            stream, original_name, expected_size = upload, upload.name or "", None
        elif content_type in RAW_CONTENT_TYPES:
            if length > limit:
                return too_large()
            stream, original_name = django_request, django_request.headers.get("X-Bundle-Filename", "")
            expected_size = length
        else:
            return error(
                415,
                "unsupported_media_type",
                f"Send the bundle as application/octet-stream or multipart/form-data, not {content_type!r}.",
            )

        try:
            submission, created = receiving.submission_create(
                uploader=request.user, stream=stream, original_name=original_name, expected_size=expected_size
            )
        except BundleTooLarge:
            return too_large()
        except receiving.NotGzip as exc:
            return error(400, "not_an_archive", str(exc))
        except receiving.EmptyUpload as exc:
            return error(400, "empty_body", str(exc))
        except receiving.IncompleteUpload as exc:
            return error(400, "incomplete_body", str(exc))
        data = SubmissionOutputSerializer(submission, context={"request": request}).data
        return Response(data, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK)


class SubmissionDetailApi(IntakeApi):
    """A submission's status and report. Owners see their own in full; everyone else only published ones."""

    authentication_classes = [HashedTokenAuthentication]
    permission_classes: list = []

    @extend_schema(
        operation_id="submissions_retrieve", responses={200: SubmissionOutputSerializer, 404: ErrorSerializer}
    )
    def get(self, request: Request, submission_id) -> Response:
        found = selectors.submission_for_viewer(submission_id=submission_id, viewer=request.user)
        if found is None:
            return error(404, "not_found", "No submission with this id is visible to you.")
        submission, visibility = found
        return Response(OUTPUT_BY_VISIBILITY[visibility](submission, context={"request": request}).data)

    @extend_schema(
        operation_id="submissions_withdraw",
        description="Withdraw your submission. It leaves pages and future releases; its id stays as a tombstone.",
        request=None,
        responses={200: SubmissionOutputSerializer, 401: ErrorSerializer, 404: ErrorSerializer},
    )
    def delete(self, request: Request, submission_id) -> Response:
        if not request.user.is_authenticated:
            return error(401, "not_authenticated", "Withdrawing needs the owner's API token.")
        submission = selectors.submissions_of(request.user).filter(pk=submission_id).first()
        if submission is None:
            return error(404, "not_found", "You have no submission with this id.")
        submission = moderation.submission_withdraw(submission=submission, by=request.user)
        return Response(SubmissionOutputSerializer(submission, context={"request": request}).data)


class SubmissionWithdrawApi(SubmissionDetailApi):
    """POST alias of DELETE, for clients that cannot send DELETE."""

    http_method_names = ["post", "options"]

    @extend_schema(operation_id="submissions_withdraw_post", request=None, responses=SubmissionOutputSerializer)
    def post(self, request: Request, submission_id) -> Response:
        return self.delete(request, submission_id)


class SigningKeyOutputSerializer(serializers.ModelSerializer):
    public_key = serializers.SerializerMethodField()

    class Meta:
        model = SigningKey
        fields = ["id", "fingerprint", "name", "public_key", "created", "revoked_at"]

    def get_public_key(self, obj: SigningKey) -> str:
        return base64.b64encode(bytes(obj.public_key)).decode()


class SigningKeyListCreateApi(IntakeApi):
    """Register the public half of your signing key; list your keys."""

    parser_classes = [JSONParser]
    authentication_classes = [HashedTokenAuthentication]
    permission_classes = [IsAuthenticated]
    throttle_classes = [AuthUserThrottle, AuthAddressThrottle]

    class InputSerializer(serializers.Serializer):
        public_key = serializers.CharField(help_text="The raw 32-byte Ed25519 public key, base64.")
        name = serializers.CharField(required=False, allow_blank=True, max_length=100, default="")
        challenge = serializers.CharField(
            required=False, allow_blank=True, max_length=500, default="", help_text="From GET /api/v1/keys/challenge/."
        )
        signature = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=200,
            default="",
            help_text="Base64 Ed25519 signature, by the key's private half, of the registration statement "
            "(nvmedb_client.signing.registration_statement: account, public key, challenge).",
        )

    @extend_schema(operation_id="keys_list", responses=SigningKeyOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(SigningKeyOutputSerializer(selectors.signing_keys_of(request.user), many=True).data)

    @extend_schema(
        operation_id="keys_create",
        request=InputSerializer,
        responses={
            201: SigningKeyOutputSerializer,
            200: SigningKeyOutputSerializer,
            400: ErrorSerializer,
            409: ErrorSerializer,
        },
    )
    def post(self, request: Request) -> Response:
        length = request.META.get("CONTENT_LENGTH") or "0"
        if not length.isdigit() or int(length) > MAX_KEY_REQUEST_BYTES:
            return error(
                413, "too_large", f"A key registration is a small JSON object (at most {MAX_KEY_REQUEST_BYTES} bytes)."
            )
        serializer = self.InputSerializer(data=request.data)
        if not serializer.is_valid():
            return error(
                400,
                "invalid",
                "Send {'public_key': <base64 of 32 bytes>, 'name': <optional>, 'challenge': ..., 'signature': ...}.",
            )
        try:
            public_key = base64.b64decode(serializer.validated_data["public_key"], validate=True)
        except (binascii.Error, ValueError):
            return error(400, "invalid_public_key", "public_key is not valid base64.")
        try:
            data = serializer.validated_data
            key, created = key_registration.signing_key_register_proven(
                user=request.user,
                public_key=public_key,
                name=data["name"],
                challenge=data["challenge"],
                signature=data["signature"],
            )
        except keys.InvalidPublicKey as exc:
            return error(400, "invalid_public_key", str(exc))
        except key_registration.InvalidProof as exc:
            return error(400, exc.code, str(exc))
        except keys.KeyOfAnotherAccount as exc:
            return error(409, "key_of_another_account", str(exc))
        return Response(SigningKeyOutputSerializer(key).data, status=201 if created else 200)


class SigningKeyChallengeApi(IntakeApi):
    """A challenge to sign when registering a key (proof that the client holds its private half)."""

    authentication_classes = [HashedTokenAuthentication]
    permission_classes = [IsAuthenticated]
    throttle_classes = [AuthUserThrottle, AuthAddressThrottle]

    class ChallengeOutputSerializer(serializers.Serializer):
        challenge = serializers.CharField()
        account = serializers.CharField(help_text="The user name the registration statement names.")
        expires_in_s = serializers.IntegerField()

    @extend_schema(operation_id="keys_challenge", responses=ChallengeOutputSerializer)
    def get(self, request: Request) -> Response:
        return Response(self.ChallengeOutputSerializer(key_registration.challenge_issue(user=request.user)).data)


class SigningKeyRevokeApi(IntakeApi):
    authentication_classes = [HashedTokenAuthentication]
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="keys_revoke", request=None, responses={200: SigningKeyOutputSerializer, 404: ErrorSerializer}
    )
    def delete(self, request: Request, key_id: int) -> Response:
        key = selectors.signing_keys_of(request.user).filter(pk=key_id).first()
        if key is None:
            return error(404, "not_found", "You have no signing key with this id.")
        return Response(SigningKeyOutputSerializer(keys.signing_key_revoke(key=key)).data)


class MeApi(IntakeApi):
    """Who the token belongs to: `nvmedb-client login` checks a token with this."""

    authentication_classes = [HashedTokenAuthentication]
    permission_classes = [IsAuthenticated]
    throttle_classes = [AuthUserThrottle, AuthAddressThrottle]

    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        token_prefix = serializers.CharField()
        token_name = serializers.CharField()
        max_bundle_bytes = serializers.IntegerField(help_text="The largest bundle this site accepts.")

    @extend_schema(operation_id="me", responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        token = request.auth
        data = {
            "username": request.user.get_username(),
            "token_prefix": token.prefix,
            "token_name": token.name,
            "max_bundle_bytes": settings.NVMEDB_MAX_BUNDLE_BYTES,
        }
        return Response(self.OutputSerializer(data).data)


class DataLicenseAcceptApi(IntakeApi):
    """Accept the data licence for the token's account: `nvmedb-client login` calls this after showing the notice."""

    authentication_classes = [HashedTokenAuthentication]
    permission_classes = [IsAuthenticated]
    throttle_classes = [AuthUserThrottle, AuthAddressThrottle]
    parser_classes = [JSONParser]

    class DataLicenseAcceptInputSerializer(serializers.Serializer):
        license = serializers.CharField(max_length=32, help_text=f"Must be {data_license.SPDX}.")

        def validate_license(self, value: str) -> str:
            if value != data_license.SPDX:
                raise serializers.ValidationError(f"The data is published under {data_license.SPDX}, not {value}.")
            return value

    class DataLicenseAcceptanceSerializer(serializers.Serializer):
        license = serializers.CharField()
        license_url = serializers.URLField()
        via = serializers.CharField()
        accepted_at = serializers.DateTimeField()

    @extend_schema(
        operation_id="data_license_accept",
        request=DataLicenseAcceptInputSerializer,
        responses={201: DataLicenseAcceptanceSerializer},
    )
    def post(self, request: Request) -> Response:
        given = self.DataLicenseAcceptInputSerializer(data=request.data)
        if not given.is_valid():
            detail = " ".join(str(e) for errors in given.errors.values() for e in errors)
            return Response({"code": "invalid", "detail": detail}, status=status.HTTP_400_BAD_REQUEST)
        accepted = accounts.data_license_accept(
            user=request.user, via=DataLicenseAcceptance.Via.CLIENT, license=given.validated_data["license"]
        )
        data = {"license": accepted.license, "license_url": data_license.URL, "via": accepted.via,
                "accepted_at": accepted.accepted_at}  # fmt: skip
        return Response(self.DataLicenseAcceptanceSerializer(data).data, status=status.HTTP_201_CREATED)
