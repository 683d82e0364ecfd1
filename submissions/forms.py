import base64
import binascii

from django import forms
from django.contrib.auth.forms import UserCreationForm

from nvmedb_client import data_license


class SignupForm(UserCreationForm):
    email = forms.EmailField(required=False, help_text="Optional; only used to reach you about your submissions.")
    accept_data_license = forms.BooleanField(
        required=True,
        label=f"I agree that the results I upload are published under {data_license.TITLE} ({data_license.SPDX})",
        help_text=data_license.NOTICE,
        error_messages={"required": f"The data is published under {data_license.SPDX}: accept it to sign up."},
    )

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")


class TokenCreateForm(forms.Form):
    name = forms.CharField(max_length=100, required=False, help_text="Where you will use it, e.g. 'lab server'.")


class TokenUpdateForm(forms.Form):
    action = forms.ChoiceField(choices=[("rename", "Rename"), ("revoke", "Revoke")])
    name = forms.CharField(max_length=100, required=False)


class SigningKeyForm(forms.Form):
    public_key = forms.CharField(
        max_length=200,
        help_text="The base64 public key that `nvmedb-client keygen` prints (32 bytes of Ed25519).",
    )
    name = forms.CharField(max_length=100, required=False)
    challenge = forms.CharField(max_length=500, widget=forms.HiddenInput)
    signature = forms.CharField(
        max_length=200,
        label="Registration signature",
        help_text="What `nvmedb-client keygen --account … --challenge …` (the command above) prints: the proof that "
        "you hold the key's private half.",
    )

    def clean_public_key(self) -> bytes:
        text = self.cleaned_data["public_key"].strip()
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise forms.ValidationError("This is not base64 text.") from None


class UploadForm(forms.Form):
    bundle = forms.FileField(help_text="The .nvmedb.tar.gz file that `nvmedb-client run` wrote.")


class ReasonForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea, max_length=2000)
