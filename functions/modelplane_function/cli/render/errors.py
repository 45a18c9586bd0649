"""The one error offline rendering reports: the CLI prints it and exits 1 with nothing on stdout."""


class RenderFailure(Exception):  # noqa: N818 - "failure" reads better than "error" in CLI output
    """The XR could not be rendered (bad input, a FATAL result, requirements that never settle)."""
