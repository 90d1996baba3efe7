"""The GitLab side of reviewer (`reviewer gitlab`, issue 27): the GitLab adapter of the
forge-neutral core (reviewer/forge/).

- `run.py`: the entry of a merge request pipeline's job; builds the adapter, calls the core's
  flows, then answers the questions asked since the last run (`questions.py`);
- `adapter.py`: the merge request as the core's ChangeRequestForge; `unposted.py`: the one a
  fork's or token-less run gets (posts nothing, says why);
- `ci.py`: the pipeline's predefined variables (fork or not, the token); `ci_side.py`: the
  job as the core's CISide (log lines, the summary file, dotenv outputs);
- `client.py`: GitLab's REST API v4 through python-gitlab, its only importer; `objects.py`
  the plain data it reads and writes.
"""
