"""The command line: `reviewer review | tool | init | eval | stats | github ...`, its parser, its
commands and the one exit point (0 clean, 1 findings at fail-on, 2 could not complete).
"""
