"""The GitHub side of reviewer, in one place: `reviewer github`, the Action's entry.

- `run.py`: the entry; it hands each trigger to its flow;
- `review_flow.py` (a pull request event), `answer_flow.py` (a comment that asks the bot),
  `dry_run.py` (the plan only): one short flow each;
- `pull.py`: the pull request a run works on; `fetch.py`: its commits in the checkout;
- `scope.py`: what a run shows the model; `memory.py`, `carry.py` and `signing.py`: what
  the bot remembers across runs, signed on its own summary comment, and the open findings
  it carries;
- `conversation.py`, `threads.py` and `asking.py`: fixed and dismissed findings on their
  threads, and who may ask what;
- `posting.py` and `run_files.py`: what a run posts and writes;
- `actions.py`: the Actions runner's environment and event, outputs, job summary and
  workflow commands;
- `client.py`: GitHub's REST and GraphQL APIs through PyGithub, its only importer.
"""
