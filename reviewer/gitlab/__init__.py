"""The GitLab side of reviewer (`reviewer gitlab`, issue 27).

- `client.py`: GitLab's REST API v4 through python-gitlab, its only importer.
"""
