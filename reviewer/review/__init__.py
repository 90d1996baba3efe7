"""The review: the pipeline of one review (context, the agent loop over each part, submission,
anchoring, budgets, progress), the question loop and the dry run.
"""
