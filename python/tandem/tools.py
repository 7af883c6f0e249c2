"""Finding Tandem's built tools (tandemc, tandem-opt, tandem-run).

In order: $TANDEM_BUILD_DIR/bin, a build/bin beside the package's checkout
(an editable install), then PATH.
"""

import os
import pathlib
import shutil


class ToolError(Exception):
    """A tool is missing or failed; the message has its output."""


def find(name):
    candidates = []
    build = os.environ.get("TANDEM_BUILD_DIR")
    if build:
        candidates.append(pathlib.Path(build) / "bin" / name)
    candidates.append(pathlib.Path(__file__).resolve().parents[2] / "build" / "bin" / name)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    if found:
        return pathlib.Path(found)
    raise ToolError(
        f"cannot find '{name}': build Tandem (scripts/setup.sh) and set TANDEM_BUILD_DIR to its "
        "build directory, or put its bin/ on PATH"
    )
