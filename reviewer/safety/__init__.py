"""Safety: untrusted text (the PR, repository files, comments, everything the model writes) is data
in every sink: the sinks, redaction of secrets, and the shapes they walk.
"""
