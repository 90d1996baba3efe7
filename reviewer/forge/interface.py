"""The one small interface between the forge-neutral core (reviewer/forge/) and a forge's
adapter (reviewer/github/, reviewer/gitlab/): what the core reads and posts on one change
request (a GitHub pull request, a GitLab merge request), and what it tells the CI system
the run is in.

Two protocols and the neutral data they carry:
- `ChangeRequestForge`: one change request, opened by the adapter; every method is about it.
- `CISide`: the CI job the run is in (log lines, annotations, outputs, job summary, masks).

Rules every adapter keeps (the core relies on them):
- Nothing is lost: a refused inline comment comes back in `PostedReview.refused`, and its
  finding is written in full into the review's body (`body_for`) or the summary.
- Only our own comments count: `is_ours` is exact (the identity the adapter posts as);
  anyone can paste our signed markers into a comment of theirs.
- `ReadOnlyToken` for every write the forge refuses for lack of rights (a fork's token): the
  core then posts nothing and says so in the job summary and annotations. Every other
  failure is a `ForgeError` (a ReviewerError: the run says "not reviewed" and exits 2).
- Text read from the forge is untrusted data; the core passes it through the sinks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any, Protocol

from reviewer.context.tickets.model import ForgeIssue, ForgeKind
from reviewer.errors import ReviewerError
from reviewer.findings import Finding
from reviewer.forge.signing import Signer

# The reaction that dismisses a finding, as the core names it (GitHub REST `-1`; an adapter
# maps its own name onto it: GitHub GraphQL THUMBS_DOWN, GitLab `thumbsdown`).
THUMBS_DOWN = "-1"


class ForgeError(ReviewerError):
    """The forge refused or failed a request, for good (after the adapter's retries)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ReadOnlyToken(ForgeError):
    """Writes are refused: a fork's change request, or a token without write rights."""


class Permission(IntEnum):
    """What a person may do in the repository, ordered. GitHub's roles map one to one;
    GitLab's roles: Guest -> READ, Reporter -> TRIAGE, Developer -> WRITE, Maintainer ->
    MAINTAIN, Owner -> ADMIN. The core asks `>= WRITE` (may dismiss, may ask freely)."""

    NONE = 0
    READ = 1
    TRIAGE = 2
    WRITE = 3
    MAINTAIN = 4
    ADMIN = 5


@dataclass(frozen=True)
class ChangeRequest:
    """A change request as the forge shows it."""

    number: int  # GitHub's PR number, GitLab's MR iid
    title: str
    body: str  # the description
    author: str  # login of who opened it ("" when unknown)
    base_sha: str
    head_sha: str
    base_ref: str
    head_ref: str
    from_fork: bool  # its head lives in another repository (its token is read-only)
    url: str  # where a person opens it
    # Opaque data of the adapter (GitLab's diff_refs, ...); the core never reads it.
    extra: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Comment:
    """A comment of the change request: on its conversation, or in a thread on a line."""

    id: int
    author: str
    body: str
    url: str = ""
    # Comments on lines: the key of the thread it is in (what `reply_in_thread` takes),
    # whether it is the thread's first comment, and where that thread is.
    thread: str | None = None
    is_root: bool = True
    path: str | None = None
    line: int | None = None
    side: str = "RIGHT"  # RIGHT: the new file; LEFT: the old one
    # The adapter's own object (to edit it without reading it again); the core never reads it.
    raw: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ThreadComment:
    """A comment of a thread, with who reacted how (logins per reaction; THUMBS_DOWN)."""

    id: int
    author: str
    body: str
    reactions: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReviewThread:
    """A thread on a line; `comments[0]` is its root."""

    id: str  # what `resolve_thread` takes
    is_resolved: bool
    resolved_by: str | None  # login of who resolved it, when the forge says
    viewer_can_resolve: bool  # whether this run's identity may resolve it
    comments: tuple[ThreadComment, ...]
    is_outdated: bool = False
    reply_to: str = ""  # what `reply_in_thread` takes (GitHub: the root's id; GitLab: id)

    @property
    def root(self) -> ThreadComment | None:
        return self.comments[0] if self.comments else None


@dataclass(frozen=True)
class InlineComment:
    """A finding to post on its line: the anchor is the finding's (path, side, line..end_line;
    `Finding.last_line` is the line a comment sits on), the text is the core's."""

    finding: Finding
    body: str


@dataclass(frozen=True)
class PostedReview:
    url: str
    posted: int  # inline comments that landed on their lines
    # Findings the forge refused inline: now in the review's body (GitHub) or in threads of
    # their own (GitLab).
    refused: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class CommentEvent:
    """The comment that started a run (a question, `/review`), as the CI event says it."""

    id: int
    action: str  # created, edited or deleted: only a new one asks
    body: str
    author: str
    in_thread: bool  # in a thread on a line (replies go there); else on the conversation
    thread: str | None  # that thread's key (what `reply_in_thread` takes)
    on_change_request: bool  # False: an issue's comment (not a question for us)


@dataclass(frozen=True)
class PostingWords:
    """What the log says a run posted, in the forge's own terms (posting.py): GitHub posts a
    review of inline comments and a summary comment; GitLab, discussions on lines and a
    summary note. `{lines}` and `{findings}` take counted nouns ("3 discussions")."""

    on_lines: str  # what the comments on lines were: "a review with {lines}", "{lines}"
    line_noun: str  # one comment on a line: "inline comment", "discussion"
    elsewhere: str  # the refused ones: "{findings} in its body"
    none_on_lines: str  # "no review", "no discussion"
    summary: str  # "summary comment", "summary note"
    first_url: str  # what the posted comments' URL is named by: "review", "discussions"
    no_write: str  # why nothing could be posted, short: "read-only token"
    no_write_long: str  # and in a sentence: "the token is read-only (a fork's pull request?)"


class Commentable(Protocol):
    def accepts(self, path: str, side: str, line: int, start_line: int | None = None) -> bool:
        """Whether the forge takes an inline comment on `line` (from `start_line`) of
        `path` on `side`: the lines its own diff of the change request shows."""
        ...


class ChangeRequestForge(Protocol):
    """One change request on a forge, opened by the adapter (its client, its number)."""

    name: str  # "GitHub", "GitLab": said in messages ("GitHub refused their line anchors")
    noun: str  # "pull request", "merge request": what messages call the change request
    bot_login: str  # the login the adapter posts as (exact; may be read lazily)
    # How people call the bot when the `mention` setting is not set: "" keeps the setting's
    # default (`@reviewer`: a GitHub App cannot be mentioned); GitLab's bot is a user, so
    # `@` and its username (`@reviewer` there would notify whoever has that name).
    own_mention: str
    # What the summary says when the token may not resolve threads: how to allow it.
    cannot_resolve: str
    # What the log calls what this forge got (closing_line).
    words: PostingWords
    # Whose Markdown every body posted here is written in ("github", "gitlab": mdtext.py),
    # so the forge's own references and commands in untrusted text stay inert.
    dialect: str
    # How the forge writes its issues' references and URLs (`#12`, `owner/repo#12`,
    # `.../issues/12` or `group/project#12`, `.../-/issues/12`): the row of
    # context/tickets/detect.py the tickets a change names are found with.
    issue_kind: ForgeKind

    def suggestion_info(self, finding: Finding) -> str:
        """The info string of the finding's suggestion block, in the forge's syntax (GitHub
        `suggestion`; GitLab `suggestion:-N+M`, lines above and below the commented one)."""
        ...

    def change_request(self) -> ChangeRequest:
        """The change request as the forge shows it now (title, body, shas, fork or not)."""
        ...

    def is_ours(self, login: str) -> bool:
        """Whether `login` (a Comment's author) is exactly the identity the adapter posts as:
        only our own comments may say what was reviewed, posted or answered."""
        ...

    def is_bot(self, login: str) -> bool:
        """Whether `login` is the identity the adapter posts as, in any spelling the forge
        uses for it (GitHub: `x[bot]` in REST, `x` in GraphQL). Used on thread authors."""
        ...

    def permission(self, login: str) -> Permission:
        """What `login` may do in the repository (NONE for someone the forge does not know).
        Asked at most once per login and run (the adapter remembers)."""
        ...

    # --- reading ---------------------------------------------------------------------------

    def conversation_comments(self) -> list[Comment]:
        """Every comment on the change request's conversation (not on lines), oldest first.
        The core finds its summary comment (and earlier answers) among `is_ours` ones."""
        ...

    def line_comments(self) -> list[Comment]:
        """Every comment on lines, each thread's root before its replies (`thread` set)."""
        ...

    def threads(self) -> list[ReviewThread]:
        """Every thread on lines, root first, with reactions and who resolved it."""
        ...

    def posted_fingerprints(self) -> set[str]:
        """Fingerprints of findings already posted by us (our inline comments and the bodies
        of our reviews, read from their signed last line): a finding is posted once."""
        ...

    def commentable(self) -> Commentable:
        """The lines the forge accepts inline comments on."""
        ...

    def issue(self, repository: str, number: int) -> ForgeIssue:
        """Issue `number` of `repository` (owner/name, group/project) on this forge, read
        with the run's token: a ticket the change names. A pull request answered as an issue
        (GitHub) says so (`is_change_request`); one whose text could reach people who may not
        read it (confidential, or in another repository that is not public) says why
        (`restricted`). A ForgeError (with its status) when it cannot be read."""
        ...

    # --- writing (ReadOnlyToken when the token may not) ------------------------------------

    def post_review(
        self,
        head_sha: str,
        comments: Sequence[InlineComment],
        body_for: Callable[[int, Sequence[Finding]], str],
        run_id: str,
    ) -> PostedReview:
        """Post the inline comments at `head_sha` as one review (never approving, never twice:
        `run_id` is in the body's marker, to look before retrying a write that may have
        landed). `body_for(posted, refused)` is the review's text for `posted` comments on
        lines and the `refused` findings written out in full: an adapter whose forge refuses
        some anchors posts those in the body, so none is lost. A forge without a review
        object (GitLab) posts the comments one by one, and what it refuses as threads of
        their own (its place named); it posts no body, and `refused` names them."""
        ...

    def upsert_summary(self, existing: Comment | None, body: str) -> str:
        """Create our summary comment, or edit `existing` (ours); its URL. A create that may
        have landed is looked for (the body's last line) before it is repeated."""
        ...

    def comment(self, body: str) -> str:
        """A new comment on the change request's conversation; its URL."""
        ...

    def reply_in_thread(self, thread: str, body: str) -> str:
        """A reply in the thread `thread` (ReviewThread.reply_to, Comment.thread,
        CommentEvent.thread); its URL."""
        ...

    def resolve_thread(self, thread_id: str) -> bool:
        """Resolve a thread (ReviewThread.id); False when the token may not."""
        ...


class CISide(Protocol):
    """The CI job the run is in: where it talks back besides the forge."""

    in_ci: bool  # inside the CI system (annotations and the job summary are read there)
    run_id: str  # this run, unique per attempt (in the review's marker)
    repository: str  # "owner/name" (the model is told which repository it reads)
    temp_dir: Path  # the job's temporary folder: the report's default place
    # Where the findings are when nothing could be posted ("the job summary and annotations").
    results_where: str

    def log(self, message: str) -> None:
        """One line in the job's log, from which the CI reads no command."""
        ...

    def error(self, message: str, title: str | None = None) -> None:
        """An error annotation (shown on the run's page)."""
        ...

    def warning(self, message: str) -> None:
        """A warning annotation."""
        ...

    def annotate(self, findings: Sequence[Finding]) -> None:
        """The findings as annotations: the fallback when nothing could be posted."""
        ...

    def write_outputs(self, outputs: Mapping[str, str]) -> None:
        """The step's outputs (`findings`, `status`, `report`, ...), for later steps."""
        ...

    def append_summary(self, markdown: str) -> None:
        """Markdown appended to the job's summary page (nothing when there is none)."""
        ...

    def mask(self, value: str | None) -> None:
        """Hide `value` in the log from now on (before it could ever be printed)."""
        ...

    def require_model_key(self) -> None:
        """Raise a ReviewerError saying what to do when the model's API key is missing, in
        the CI's terms (a fork's run gets no secrets)."""
        ...


@dataclass(frozen=True)
class OpenChange:
    """A change request opened for a run: the adapter, what it says of the change, and the
    revisions every flow needs, fetched into the checkout at `root`."""

    forge: ChangeRequestForge
    info: ChangeRequest
    base_sha: str
    head_sha: str
    merge_base: str
    root: Path
    signer: Signer  # the key the memory and the markers are signed with (signing.py)


# The adapter's way to open the change request a run is about (called once, when the flow
# needs it: after the checks that need no forge).
Opener = Callable[[], OpenChange]
