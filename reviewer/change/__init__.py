"""The change under review: `merge-base(base, head)..head` parsed into files, hunks and lines.

`load_change` asks git (one `git diff` for any number of files); `parse_patch` is the pure
parser; `Change.locate` applies GitHub's rule for where a review comment may sit.
"""

from reviewer.change.load import added_file, load_change, merge_base, untracked_file
from reviewer.change.model import (
    SUBMODULE_MODE,
    SYMLINK_MODE,
    Change,
    DiffLine,
    FileChange,
    Hunk,
    LineKind,
    Side,
    Status,
)
from reviewer.change.parse import (
    MAX_FILE_PATCH_BYTES,
    MAX_FILE_PATCH_LINES,
    PatchError,
    parse_hunks,
    parse_patch,
    unquote,
)

__all__ = [
    "MAX_FILE_PATCH_BYTES",
    "MAX_FILE_PATCH_LINES",
    "SUBMODULE_MODE",
    "SYMLINK_MODE",
    "Change",
    "DiffLine",
    "FileChange",
    "Hunk",
    "LineKind",
    "PatchError",
    "Side",
    "Status",
    "added_file",
    "load_change",
    "merge_base",
    "parse_hunks",
    "parse_patch",
    "unquote",
    "untracked_file",
]
