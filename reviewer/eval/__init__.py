"""`reviewer eval`: run the normal review on every case of a dataset, judge its findings
against the issues each case is known to have, and score the bot (precision, recall, noise,
cost). Datasets come from a table of formats (formats.py); cases are neutral data (cases.py).
"""
