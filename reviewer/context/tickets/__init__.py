"""The tickets a change names: what it is for. `detect` finds them in the change's text,
`read` reads at most `max_tickets` of them (the forge's issues through its adapter, Jira's
through `reviewer.context.jira`), each cut to a few thousand characters; `model` holds the
neutral data. A ticket that cannot be read is one line in the log and an entry in the JSON
report's `context.tickets`, never an error: the review goes on without it.
"""
