"""Readers for result directories written by other open-source PTS tools (SSSPT, py-sss-pts)."""
