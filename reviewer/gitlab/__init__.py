"""The GitLab side of reviewer (`reviewer gitlab`, issue 27).

- `client.py`: GitLab's REST API v4 through python-gitlab, its only importer;
- `ci.py`: the merge request pipeline's predefined variables (fork or not, the token).
"""
