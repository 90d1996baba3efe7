"""The GitHub side of reviewer, in one place: `reviewer github`, the Action's entry.

- `actions.py`: the Actions runner's environment and event, its outputs, job summary and
  workflow commands;
- `client.py`: GitHub's REST (and GraphQL) API through PyGithub, its only importer;
- `fetch.py`: the pull request's commits in the checkout;
- `memory.py` and `signing.py`: what the bot remembers across runs, signed on its own
  summary comment;
- `review_flow.py`: one run on a pull request, from its event to the posted review.
"""
