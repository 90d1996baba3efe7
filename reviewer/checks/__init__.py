"""The checks on the model's findings: grounding in the diff, the verification loop and its
verdict, the noise table, merging duplicates and checking suggestions.
"""
