"""Validation of every query parameter and form of the browse pages (a bad value is a 400 with a message)."""

from __future__ import annotations

import re

from django import forms

from analysis.models import DriveMetadataProposal

SLUG = re.compile(r"^[-a-zA-Z0-9_]{1,220}$")
MAX_COMPARED = 4


class PageForm(forms.Form):
    page = forms.IntegerField(required=False, min_value=1, max_value=100_000)


class RunChoiceForm(forms.Form):
    """Which submission's runs the drive page charts (default: the representative runs)."""

    submission = forms.UUIDField(required=False)


class CompareForm(forms.Form):
    """Fewer than two drives is not an error: the page then shows the drive picker (see `too_few`)."""

    drives = forms.CharField(
        max_length=4 * 221, help_text="Two to four drive slugs, comma-separated: ?drives=a,b,c", required=False
    )
    q = forms.CharField(max_length=100, required=False, label="Search drives")

    @property
    def too_few(self) -> bool:
        return len(self.cleaned_data.get("drives") or []) < 2

    def clean_drives(self) -> list[str]:
        slugs = [s.strip() for s in self.cleaned_data["drives"].split(",") if s.strip()]
        slugs = list(dict.fromkeys(slugs))
        bad = [s for s in slugs if not SLUG.match(s)]
        if bad:
            raise forms.ValidationError(f"Not a drive slug: {bad[0][:60]!r}.")
        if len(slugs) > MAX_COMPARED:
            raise forms.ValidationError(f"Compare two to {MAX_COMPARED} different drives (got {len(slugs)}).")
        return slugs


class MetadataProposalForm(forms.ModelForm):
    source_url = forms.URLField(
        max_length=500,
        assume_scheme="https",
        label="Source (URL)",
        help_text="A datasheet, teardown or review that shows these values. Required.",
    )

    class Meta:
        model = DriveMetadataProposal
        fields = ["controller", "nand_type", "dram", "form_factor", "source_url", "note"]
        labels = {"nand_type": "NAND type", "dram": "DRAM", "source_url": "Source (URL)"}
        help_texts = {
            "source_url": "A datasheet, teardown or review that shows these values. Required.",
            "dram": "e.g. '1 GB LPDDR4' or 'none (HMB)'.",
        }

    # spec-sheet figures are entered as vendors print them (MB/s, IOPS) and stored in SI units
    spec_seq_read_mb_s = forms.FloatField(required=False, min_value=1, label="Spec sheet: sequential read (MB/s)")
    spec_seq_write_mb_s = forms.FloatField(required=False, min_value=1, label="Spec sheet: sequential write (MB/s)")
    spec_rand_read_iops = forms.FloatField(required=False, min_value=1, label="Spec sheet: 4 KiB random read (IOPS)")
    spec_rand_write_iops = forms.FloatField(required=False, min_value=1, label="Spec sheet: 4 KiB random write (IOPS)")

    def spec_values(self) -> dict[str, float | None]:
        mb = 1e6
        read, write = self.cleaned_data.get("spec_seq_read_mb_s"), self.cleaned_data.get("spec_seq_write_mb_s")
        return {
            "spec_seq_read_bytes_per_s": read * mb if read else None,
            "spec_seq_write_bytes_per_s": write * mb if write else None,
            "spec_rand_read_iops": self.cleaned_data.get("spec_rand_read_iops"),
            "spec_rand_write_iops": self.cleaned_data.get("spec_rand_write_iops"),
        }

    def clean_source_url(self) -> str:
        url = self.cleaned_data["source_url"]
        if not url.lower().startswith(("https://", "http://")):
            raise forms.ValidationError("The source must be an http(s) link.")
        return url

    def clean(self):
        cleaned = super().clean()
        text = any((cleaned.get(name) or "").strip() for name in ("controller", "nand_type", "dram", "form_factor"))
        spec = any(cleaned.get(name) for name in ("spec_seq_read_mb_s", "spec_seq_write_mb_s", "spec_rand_read_iops",
                                                   "spec_rand_write_iops"))  # fmt: skip
        if not (text or spec):
            raise forms.ValidationError(
                "Propose at least one of controller, NAND type, DRAM, form factor or a spec-sheet figure."
            )
        return cleaned
