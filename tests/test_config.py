"""Settings: sources in order, validation once, unknown keys named with their file."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from reviewer.errors import ReviewerError
from reviewer.findings import Severity
from reviewer.settings import layers
from reviewer.settings.config import Settings, require_model_settings
from reviewer.settings.layers import environment_layer, load_settings
from reviewer.testing import FakeLLM
from tests.conftest import GitRepo


def settings_for(repo: GitRepo, *, flags: dict | None = None, env: dict | None = None, **kw):
    return load_settings(
        flags=flags or {},
        root=repo.root,
        config_revision=kw.get("revision", repo.head()),
        config_path=kw.get("config_path"),
        environ=env or {},
    )


def test_defaults_when_nothing_is_configured(repo: GitRepo) -> None:
    repo.write("a.txt", "x\n")
    repo.commit()
    settings = settings_for(repo)
    assert settings == Settings()
    assert settings.fail_on == "none" and settings.min_severity is Severity.INFO


def test_flags_beat_environment_beat_file(repo: GitRepo) -> None:
    repo.write(".reviewer.toml", 'model = "from-file"\nmax_turns = 7\nfail_on = "low"\n')
    repo.commit()
    env = {"REVIEWER_MODEL": "from-env", "REVIEWER_FAIL_ON": "medium", "OPENAI_API_KEY": "k"}
    settings = settings_for(repo, flags={"model": "from-flag", "fail_on": None}, env=env)
    assert settings.model == "from-flag"
    assert settings.fail_on == "medium"
    assert settings.max_turns == 7
    assert settings.api_key is not None and settings.api_key.get_secret_value() == "k"


def test_pyproject_tool_table(repo: GitRepo) -> None:
    repo.write(
        "pyproject.toml",
        '[project]\nname = "x"\n\n[tool.reviewer]\nexclude = ["docs/**"]\n'
        '[tool.reviewer.path_instructions]\n"**/*.sql" = "Check for injection."\n',
    )
    repo.commit()
    settings = settings_for(repo)
    assert settings.exclude == ("docs/**",)
    assert settings.path_instructions == {"**/*.sql": "Check for injection."}


def test_reviewer_toml_wins_over_pyproject(repo: GitRepo) -> None:
    repo.write("pyproject.toml", '[tool.reviewer]\nmodel = "pyproject"\n')
    repo.write(".reviewer.toml", 'model = "dedicated"\n')
    repo.commit()
    assert settings_for(repo).model == "dedicated"


def test_unknown_key_names_the_key_and_the_file(repo: GitRepo) -> None:
    repo.write(".reviewer.toml", 'modle = "typo"\n')
    base = repo.commit()
    with pytest.raises(
        ReviewerError, match=rf"unknown setting 'modle' in \.reviewer\.toml at {base[:12]}"
    ) as caught:
        settings_for(repo)
    # The known settings it offers are those a file may set: not api_key, which a file is
    # refused (it was listed).
    known = str(caught.value).split("known settings: ")[1].split(", ")
    assert "model" in known and "base_url" in known and "api_key" not in known


def test_unknown_environment_setting(repo: GitRepo) -> None:
    repo.commit()
    with pytest.raises(
        ReviewerError, match=r"unknown setting 'colour' in the environment"
    ) as caught:
        settings_for(repo, env={"REVIEWER_COLOUR": "red"})
    assert "api_key" in str(caught.value).split("known settings: ")[1].split(", ")


def test_invalid_value_names_the_key_and_source(repo: GitRepo) -> None:
    repo.write(".reviewer.toml", "max_turns = 0\n")
    repo.commit()
    with pytest.raises(ReviewerError, match=r"invalid setting 'max_turns' in \.reviewer\.toml"):
        settings_for(repo)
    with pytest.raises(ReviewerError, match=r"invalid setting 'fail_on' in the environment"):
        settings_for(repo, env={"REVIEWER_FAIL_ON": "sometimes"})


def test_a_bad_path_instruction_names_its_entry_and_shows_the_shape(repo: GitRepo) -> None:
    repo.write(".reviewer.toml", '[path_instructions]\n"*.py" = 3\n')
    repo.commit()
    with pytest.raises(ReviewerError) as caught:
        settings_for(repo)
    message = str(caught.value)
    assert "invalid setting 'path_instructions' (entry '*.py') in .reviewer.toml" in message
    assert 'Example: path_instructions = { "src/**/*.py" = "Check error handling." }' in message
    assert "\n" not in message
    repo.write(".reviewer.toml", 'path_instructions = ["check"]\n')
    repo.commit()
    with pytest.raises(ReviewerError, match=r"valid dictionary\. path_instructions: Glob"):
        settings_for(repo)


def test_a_bad_number_says_what_the_setting_is(repo: GitRepo) -> None:
    repo.write(".reviewer.toml", "max_turns = 0\n")
    repo.commit()
    with pytest.raises(ReviewerError, match=r"greater than or equal to 1\. max_turns: "):
        settings_for(repo)


def test_broken_toml_is_a_clear_error(repo: GitRepo) -> None:
    repo.write(".reviewer.toml", "model = \n")
    repo.commit()
    with pytest.raises(ReviewerError, match="not valid TOML"):
        settings_for(repo)


def test_config_is_read_from_the_given_revision_not_the_working_tree(repo: GitRepo) -> None:
    repo.write(".reviewer.toml", 'model = "base-model"\n')
    base = repo.commit("base")
    repo.write(".reviewer.toml", 'model = "pr-model"\nfail_on = "none"\n')
    repo.commit("the change rewrites the rules")
    repo.write(".reviewer.toml", 'model = "disk-model"\n')
    assert settings_for(repo, revision=base).model == "base-model"


def test_explicit_config_file(repo: GitRepo, tmp_path: Path) -> None:
    repo.commit()
    path = tmp_path / "ci.toml"
    path.write_text('include = "src/**"\nmax_findings = 3\n')
    settings = settings_for(repo, config_path=path)
    assert settings.include == ("src/**",) and settings.max_findings == 3
    with pytest.raises(ReviewerError, match="cannot read"):
        settings_for(repo, config_path=tmp_path / "missing.toml")


def test_environment_lists_split_on_commas(repo: GitRepo) -> None:
    repo.commit()
    settings = settings_for(repo, env={"REVIEWER_EXCLUDE": "docs/**, *.lock"})
    assert settings.exclude == ("docs/**", "*.lock")


def test_missing_model_settings_say_what_to_set() -> None:
    with pytest.raises(ReviewerError) as caught:
        require_model_settings(Settings())
    message = str(caught.value)
    assert "REVIEWER_MODEL" in message and "OPENAI_API_KEY" in message
    assert "OPENAI_BASE_URL" in message
    require_model_settings(Settings(model="m", api_key="k"))  # type: ignore[arg-type]


def test_fail_on() -> None:
    settings = Settings(fail_on="medium")
    assert settings.fails(Severity.HIGH) and settings.fails(Severity.MEDIUM)
    assert not settings.fails(Severity.LOW)
    assert not Settings().fails(Severity.CRITICAL)


def test_the_actions_own_variables_do_not_stop_a_review(tmp_path: Path, repo: GitRepo) -> None:
    # The Action passes its `state-key` and `bot-login` inputs as REVIEWER_STATE_KEY and
    # REVIEWER_BOT_LOGIN; they are not settings, and a review with them set runs (on a783bd8
    # it exited 2: "unknown setting 'state_key' in the environment").
    repo.write("app.py", "x = 1\n")
    repo.commit("base")
    repo.write("app.py", "x = 2\n")
    repo.commit("change")
    script = [{"tool_calls": [{"name": "submit_review", "arguments": {"summary": "ok"}}]}]
    with FakeLLM(script) as llm:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("REVIEWER_")},
            "OPENAI_BASE_URL": llm.base_url,
            "OPENAI_API_KEY": "k",
            "REVIEWER_MODEL": "fake-model",
            "REVIEWER_STATE_KEY": "x",
            "REVIEWER_BOT_LOGIN": "reviewer-app[bot]",
            "NO_PROXY": "127.0.0.1,localhost",
        }
        proc = subprocess.run(
            [sys.executable, "-m", "reviewer", "review", "--base", "HEAD~1", "--quiet"],
            cwd=repo.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        requests = len(llm.bodies)
    assert proc.returncode == 0, proc.stderr
    assert requests == 1


def test_every_reviewer_variable_the_code_reads_is_a_setting_or_listed() -> None:
    """One list (COMMAND_VARIABLES) says which REVIEWER_* variables are not settings; every
    other one the code or action.yml names must be a setting, or the settings loader would
    refuse it."""
    project = Path(__file__).resolve().parents[1]
    texts = [p.read_text() for p in (project / "reviewer").rglob("*.py")]
    texts.append((project / "action.yml").read_text())
    named = set(re.findall(r"\bREVIEWER_([A-Z][A-Z_]*[A-Z])\b", "\n".join(texts)))
    settings = {name.upper() for name in Settings.model_fields}
    listed = {name.removeprefix("REVIEWER_") for name in layers.COMMAND_VARIABLES}
    assert named - settings - listed == set()
    assert listed.isdisjoint(settings)
    # And the loader skips exactly those: each set at once is no setting.
    environ = {name: "x" for name in layers.COMMAND_VARIABLES}
    assert environment_layer(environ).values == {}


def notes_for(repo: GitRepo) -> list[str]:
    from reviewer.settings.layers import settings_notes

    return settings_notes(repo.root, repo.head(), None, None)


def test_a_pyproject_without_our_table_is_never_warned_about(repo: GitRepo) -> None:
    """A project's pyproject.toml changes in most reviews (flask's did): it only matters when
    its [tool.reviewer] table does."""
    repo.write("pyproject.toml", '[project]\nname = "x"\nversion = "1"\n')
    repo.commit()
    repo.write("pyproject.toml", '[project]\nname = "x"\nversion = "2"\n')
    assert notes_for(repo) == ["settings: defaults (no settings file)"]
    repo.write("pyproject.toml", '[project]\nname = "x"\n\n[tool.reviewer]\nmax_turns = 9\n')
    repo.commit()
    repo.write("pyproject.toml", '[project]\nname = "y"\n\n[tool.reviewer]\nmax_turns = 9\n')
    assert notes_for(repo) == [f"settings: [tool.reviewer] in pyproject.toml at {repo.head()[:12]}"]


def test_changed_settings_in_the_working_tree_are_named_as_they_are(repo: GitRepo) -> None:
    repo.write("pyproject.toml", "[tool.reviewer]\nmax_turns = 9\n")
    base = repo.commit()[:12]
    repo.write("pyproject.toml", "[tool.reviewer]\nmax_turns = 3\n")
    repo.write(".reviewer.toml", "max_turns = 5\n")  # untracked: not at the base revision
    used = f"[tool.reviewer] in pyproject.toml at {base}"
    assert notes_for(repo) == [
        f"settings: {used}",
        f"warning: the working tree's .reviewer.toml is not in the base revision {base}; "
        f"the settings used are the base revision's ({used}), so a change cannot rewrite its "
        "rules; to try the local one, pass --config .reviewer.toml",
        f"warning: the [tool.reviewer] table of the working tree's pyproject.toml differs "
        f"from the one at {base}; the settings used are the base revision's ({used}), so a change "
        "cannot rewrite its rules; to try the local one, pass --config pyproject.toml",
    ]


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        (".reviewer.toml", 'api_key = "sk-live"\n', ".reviewer.toml at {base}"),
        (
            "pyproject.toml",
            '[tool.reviewer]\napi_key = "sk-live"\n',
            "[tool.reviewer] in pyproject.toml at {base}",
        ),
    ],
)
def test_an_api_key_in_a_settings_file_is_refused(
    repo: GitRepo, tmp_path: Path, name: str, text: str, where: str
) -> None:
    """A settings file is committed: a key in it is a leaked secret. The endpoint is not
    a secret, and a repository may name its own."""
    repo.write(name, text)
    base = repo.commit()[:12]
    expected = (
        rf"^{re.escape(where.format(base=base))} sets api_key, and a key must not be in a "
        r"settings file \(it gets committed\): remove it and set OPENAI_API_KEY \(in the GitHub "
        r"Action, the api-key input, from a secret\)$"
    )
    with pytest.raises(ReviewerError, match=expected):
        settings_for(repo)
    with pytest.raises(ReviewerError, match="sets api_key"):
        settings_for(repo, config_path=repo.root / name)
    repo.write(name, text.replace('api_key = "sk-live"', 'base_url = "http://llm.internal/v1"'))
    repo.commit()
    assert settings_for(repo).base_url == "http://llm.internal/v1"


def test_a_mention_may_be_a_gitlab_username() -> None:
    """GitLab usernames hold `_` and `.` (a project access token's bot: `project_7_bot`)."""
    assert Settings.model_validate({"mention": "@project_7_bot"}).mention == "@project_7_bot"
    assert Settings.model_validate({"mention": "@jane.doe"}).mention == "@jane.doe"
    for bad in ("@bad name", "reviewer", "@", "@trailing."):
        with pytest.raises(ValidationError):
            Settings.model_validate({"mention": bad})
