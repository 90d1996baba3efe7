"""A merge request's repository for the fake GitLab's and the GitLab client's tests.

app.py's diff has two hunks: @@ -2,7 +2,7 @@ (line 5 removed and added again, changed) and
@@ -28,6 +28,8 @@ (new lines 31 and 32 added after line 30); old_name.py is renamed to
new_name.py with line 3 changed; new.py is added.
"""

from __future__ import annotations

from tests.conftest import GitRepo

APP = "".join(f"line {i}\n" for i in range(1, 41))
OLD_MODULE = "".join(f"value_{i} = {i}\n" for i in range(1, 11))


def make_merge_request(repo: GitRepo) -> GitRepo:
    repo.write("app.py", APP)
    repo.write("old_name.py", OLD_MODULE)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    app = APP.replace("line 5\n", "line 5 changed\n").replace(
        "line 30\n", "line 30\nadded A\nadded B\n"
    )
    repo.write("app.py", app)
    (repo.root / "old_name.py").unlink()
    repo.write("new_name.py", OLD_MODULE.replace("value_3 = 3", "value_3 = 33"))
    repo.write("new.py", "print('hi')\n")
    repo.commit("feature work")
    return repo
