"""Errors a user can cause or meet (no GPU, a malformed file, a bad store path).

The CLI prints their message on one line and exits non-zero; no traceback."""


class LinkroofError(Exception):
    """Base of every error whose message is meant for the user as it is."""

    exit_code = 1


class NoGpuError(LinkroofError):
    """No NVIDIA driver, NVML library or GPU here."""

    exit_code = 3
