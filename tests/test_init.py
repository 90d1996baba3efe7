"""`reviewer init`, run as a user runs it: a real process in a real repository."""

from __future__ import annotations

import re
import tomllib
import zipfile
from pathlib import Path

from reviewer.cli.init import NOT_IN_FILE, example_workflow, settings_template
from reviewer.settings.config import Settings
from reviewer.settings.layers import config_file_layer, resolve_settings
from tests.conftest import GitRepo
from tests.test_cli import reviewer
from tests.test_package import wheel  # noqa: F401  (the built wheel, a module fixture)

PROJECT = Path(__file__).resolve().parents[1]


def _uncommented(text: str) -> str:
    """Every commented-out setting line made live (comment prose left out)."""
    live = []
    for line in text.splitlines():
        body = line.removeprefix("# ")
        if re.match(r'^(\[[a-z_]+(\."[^"]*")?\]|[a-z_]+ = |"[^"]*" = )', body):
            live.append(body)
    return "\n".join(live) + "\n"


def test_init_writes_every_setting_commented_out_with_its_default(repo: GitRepo) -> None:
    repo.write("app.py", "x = 1\n")
    repo.commit("first")
    proc = reviewer("init", "--repo", str(repo.root))
    assert proc.returncode == 0, proc.stderr
    written = repo.root / ".reviewer.toml"
    assert f"wrote {written}" in proc.stderr
    text = written.read_text(encoding="utf-8")
    # As written, the file changes nothing: every line is a comment.
    assert all(not line or line.startswith("#") for line in text.splitlines())
    assert tomllib.loads(text) == {}
    # Uncommented, it names every setting but the secret ones, and each default is the real
    # one (the settings loader accepts it: no unknown key, no invalid value).
    live = tomllib.loads(_uncommented(text))
    assert set(live) == set(Settings.model_fields) - NOT_IN_FILE
    settings = resolve_settings([config_file_layer_from(live)])
    defaults = Settings()
    for name in ("max_turns", "max_tokens", "fail_on", "min_severity", "concurrency"):
        assert getattr(settings, name) == getattr(defaults, name)
    for name, field in Settings.model_fields.items():
        if name not in NOT_IN_FILE:
            assert f"# {field.description}" in text, name


def config_file_layer_from(values: dict[str, object]):  # type: ignore[no-untyped-def]
    from reviewer.settings.layers import Layer

    return Layer("the generated file", values)


def test_the_generated_file_is_read_from_the_base_revision_like_any_settings_file(
    repo: GitRepo,
) -> None:
    repo.write(".reviewer.toml", settings_template().replace("# fail_on = ", "fail_on = "))
    base = repo.commit("settings")
    layer = config_file_layer(repo.root, base)
    assert layer is not None and layer.values == {"fail_on": "none"}


def test_init_refuses_to_overwrite_and_names_the_file(repo: GitRepo) -> None:
    repo.write(".reviewer.toml", "fail_on = 'high'\n")
    repo.commit("settings")
    proc = reviewer("init", "--repo", str(repo.root))
    assert proc.returncode == 2
    assert f"{repo.root / '.reviewer.toml'} already exists; pass --force" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert (repo.root / ".reviewer.toml").read_text() == "fail_on = 'high'\n"
    forced = reviewer("init", "--force", "--repo", str(repo.root))
    assert forced.returncode == 0, forced.stderr
    assert "# fail_on = " in (repo.root / ".reviewer.toml").read_text()


def test_init_github_after_init_adds_the_workflow_and_keeps_the_edited_settings(
    repo: GitRepo,
) -> None:
    # Before: "already exists; pass --force", and --force overwrote the edited settings.
    assert reviewer("init", "--repo", str(repo.root)).returncode == 0
    settings = repo.root / ".reviewer.toml"
    settings.write_text("fail_on = 'high'\n")
    proc = reviewer("init", "--github", "--repo", str(repo.root))
    assert proc.returncode == 0, proc.stderr
    assert f"{settings}: kept as it is (it already exists)" in proc.stderr
    workflow = repo.root / ".github" / "workflows" / "review.yml"
    assert workflow.is_file() and settings.read_text() == "fail_on = 'high'\n"
    # The workflow exists now: refused without --force, and --force rewrites only it.
    again = reviewer("init", "--github", "--repo", str(repo.root))
    assert again.returncode == 2 and f"{workflow} already exists" in again.stderr
    workflow.write_text("edited\n")
    forced = reviewer("init", "--github", "--force", "--repo", str(repo.root))
    assert forced.returncode == 0, forced.stderr
    assert workflow.read_text() == example_workflow()
    assert settings.read_text() == "fail_on = 'high'\n"


def test_the_workflow_is_written_where_it_says_to_copy_it(repo: GitRepo) -> None:
    note = example_workflow().splitlines()[1]
    assert note.startswith("# Copy to .github/workflows/review.yml"), note
    assert reviewer("init", "--github", "--repo", str(repo.root)).returncode == 0
    assert (repo.root / ".github" / "workflows" / "review.yml").read_text() == example_workflow()


def test_init_github_writes_the_documented_example_workflow(repo: GitRepo) -> None:
    repo.commit("first")
    proc = reviewer("init", "--github", "--repo", str(repo.root / "."))
    assert proc.returncode == 0, proc.stderr
    workflow = repo.root / ".github" / "workflows" / "review.yml"
    assert workflow.read_text() == (PROJECT / "docs" / "examples" / "review.yml").read_text()
    assert "edit `uses: OWNER/reviewer@v1`" in proc.stderr
    again = reviewer(
        "init", "--github", "--force", "--action", "acme/reviewer@abc123", "--repo", str(repo.root)
    )
    assert again.returncode == 0, again.stderr
    text = workflow.read_text()
    assert "uses: acme/reviewer@abc123" in text and "OWNER/reviewer" not in text
    assert "next:" not in again.stderr


def test_init_outside_a_repository_says_what_to_do(tmp_path: Path) -> None:
    proc = reviewer("init", "--repo", str(tmp_path))
    assert proc.returncode == 2
    assert "is not inside a git repository" in proc.stderr


def test_the_wheel_ships_the_example_workflow(wheel: zipfile.ZipFile) -> None:  # noqa: F811
    shipped = wheel.read("reviewer/examples/review.yml").decode()
    assert shipped == example_workflow()
