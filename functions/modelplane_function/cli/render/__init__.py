"""Offline rendering: drive the real function over gRPC the way `crossplane render` does.

`render_documents` renders one XR (and, recursively, every composed XR that has a Composition here)
and returns the documents; `render_stream` does the same from files and returns the YAML stream
that `modelplane render` prints. Both raise RenderFailure, and print nothing, on any error.
"""

from modelplane_function.cli.render.driver import render_documents, render_files, render_stream
from modelplane_function.cli.render.errors import RenderFailure

__all__ = ["RenderFailure", "render_documents", "render_files", "render_stream"]
