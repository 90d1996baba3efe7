"""The GitHub adapter of the forge-neutral core (reviewer/forge/): `reviewer github`, the
Action's entry.

- `run.py`: the entry; it builds the adapter and hands each trigger to the core's flow;
- `adapter.py`: `GitHubPull`, a pull request as the core's `ChangeRequestForge` (GitHub's
  422 fallback for inline comments, its bot logins), and `open_pull`, which opens the
  event's pull request for a run;
- `client.py`: GitHub's REST and GraphQL APIs through PyGithub, its only importer;
- `threads.py`: the review threads over GraphQL (REST has none), read and resolved;
- `actions.py`: the Actions runner's environment and event, outputs, job summary and
  workflow commands (`ActionsCI`, the core's `CISide`).
"""
