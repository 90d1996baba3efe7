"""The forge-neutral core of a run on a change request (a pull request, a merge request).

- `interface.py`: the one interface to a forge's adapter (reviewer/github/, reviewer/gitlab/).
"""
