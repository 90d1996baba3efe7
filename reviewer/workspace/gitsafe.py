"""Which git configuration can run programs, and the overrides that switch it off.

The bot reads repositories it did not make: the one under review and the ones an evaluation
dataset names (a dataset shared as an archive ships its repository's `.git/config`). Config
in such a repository can name programs git then runs: a filter driver, a partial clone's
`remote.<name>.uploadpack` on a lazy fetch, a remote helper (`remote.<name>.vcs` reaching
an alias), a credential helper. `gitcmd` gives every git call the overrides made here, so no
repository's configuration runs a program. How each kind of knob is switched off:

- Fixed keys are pinned for every call (`PINNED`): hooks, fsmonitor, the pager, askpass,
  credential helpers, submodule recursion, automatic housekeeping, and a protocol policy that
  allows https only (no `file`, `ssh`, `git`, `ext` or remote helper: a lazy fetch cannot
  reach a local repository's upload-pack, an ssh command or an alias).
- Keys named by a driver or remote (`filter.<driver>.clean`, `protocol.<name>.allow`) cannot
  be listed ahead: `overrides` reads the repository's configuration (includes followed, as
  git does; reading config runs nothing) and neutralizes each one found. A driver named in
  `.gitattributes` but defined nowhere runs nothing, so that is enough. (git 2.40's
  `--attr-source` could ignore the attributes instead, but this program supports git 2.39.)
- Diff drivers (`diff.<driver>.textconv`, `.command`) and `diff.external` have no value that
  means "none" (an empty one is run as a program and fails), so every command that would use
  them gets `--no-textconv` and `--no-ext-diff` (`SUBCOMMAND_FLAGS`).

`uploadpack.packObjectsHook` and `trace2.*` are read by git from system and user config only,
never from a repository, so they need nothing here.
"""

from __future__ import annotations

from collections.abc import Collection

# Every call: config that could run a program or let a fetch reach one.
PINNED = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.askPass=",
    "credential.helper=",  # an empty value clears every helper configured before it
    "protocol.allow=never",
    "protocol.https.allow=always",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "diff.ignoreSubmodules=dirty",  # a submodule's status would run git in its own config
    "gc.auto=0",
    "maintenance.auto=false",
    "log.showSignature=false",  # verifying a signature runs gpg.program
)

# Flags each command gets right after its name (flags win over config).
SUBCOMMAND_FLAGS: dict[str, tuple[str, ...]] = {
    "diff": ("--no-ext-diff", "--no-textconv"),
    "log": ("--no-ext-diff", "--no-textconv"),
    "show": ("--no-ext-diff", "--no-textconv"),
    "blame": ("--no-textconv",),
    "grep": ("--no-textconv",),
}

# Keys `<section>.<name>.<key>` whose value names a program, and what each is set to instead.
_BY_NAME: dict[tuple[str, str], str] = {
    ("filter", "clean"): "",  # empty: no command, the content passes unchanged
    ("filter", "smudge"): "",
    ("filter", "process"): "",
    ("filter", "required"): "false",  # so a filter without a command is not an error
    ("remote", "uploadpack"): "git-upload-pack",
    ("remote", "receivepack"): "git-receive-pack",
    ("credential", "helper"): "",
}

# The git command that lists a repository's configuration for `overrides`.
LIST_CONFIG = ("config", "--list", "--includes", "-z")


def overrides(listed: bytes, fetch_over: Collection[str] = ()) -> list[tuple[str, str]]:
    """The (key, value) overrides for a repository whose `git config --list -z` is `listed`:
    each program a named driver or remote could run switched off, and each protocol set to
    `never` except those in `fetch_over`, which are allowed."""
    found: dict[str, str] = {}
    for record in listed.split(b"\0"):
        key = record.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
        section, _, rest = key.partition(".")
        name, _, variable = rest.rpartition(".")
        section, variable = section.lower(), variable.lower()
        if not name:
            continue
        if section == "protocol" and variable == "allow":
            found[key] = "always" if name in fetch_over else "never"
        elif section == "filter":
            for each in ("clean", "smudge", "process", "required"):
                found[f"filter.{name}.{each}"] = _BY_NAME[("filter", each)]
        elif (section, variable) in _BY_NAME:
            found[key] = _BY_NAME[(section, variable)]
    for protocol in sorted(fetch_over):
        found[f"protocol.{protocol}.allow"] = "always"
    return list(found.items())


def with_flags(args: list[str]) -> list[str]:
    """`args` with the `SUBCOMMAND_FLAGS` of its command after the command's name (leading
    `-c key=value` pairs and other global options skipped)."""
    at = 0
    while at < len(args) and args[at].startswith("-"):
        at += 2 if args[at] in ("-c", "-C") else 1
    if at >= len(args):
        return args
    flags = SUBCOMMAND_FLAGS.get(args[at], ())
    return [*args[: at + 1], *flags, *args[at + 1 :]]
