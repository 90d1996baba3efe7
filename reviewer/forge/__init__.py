"""The forge-neutral core of a run on a change request (a GitHub pull request, a GitLab merge
request): what the bot decides, remembers and posts, whatever the forge. It imports no forge
(tests/test_forge_core.py); an adapter (reviewer/github/, reviewer/gitlab/) implements
`interface.py` and calls a flow.

- `interface.py`: the one interface to a forge (`ChangeRequestForge`) and to its CI job
  (`CISide`), with the neutral data they carry;
- `review_flow.py` (a push or a manual run), `answer_flow.py` (a comment that asks the bot),
  `dry_run.py` (the plan only): one short flow each, read as a list;
- `scope.py`: what a run shows the model; `fetch.py`: the change's commits in the checkout;
- `state.py`, `memory.py`, `carry.py` and `signing.py`: what the bot remembers across runs,
  signed on its own summary comment, and the open findings it carries;
- `conversation.py`, `dismissals.py` and `asking.py`: fixed and dismissed findings on their
  threads, and who may ask and dismiss what;
- `posting.py` and `run_files.py`: what a run posts (inline comments, the summary) and writes
  (the JSON report, the SARIF log).
"""
