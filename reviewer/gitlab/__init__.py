"""The GitLab side of reviewer (`reviewer gitlab`, issue 27).

- `client.py`: GitLab's REST API v4 through python-gitlab, its only importer; `objects.py`
  the plain data it reads and writes;
- `ci.py`: the merge request pipeline's predefined variables (fork or not, the token);
- `adapter.py`: the merge request as the forge-neutral core's ChangeRequestForge.
"""
