"""What a reviewer reads besides the diff, whatever the forge: the tickets the change names
(`tickets/`: found in its text, read from the forge or Jira, bounded and labelled as data).
Below the review (review/ and checks/ use it); it imports nothing of review/, checks/, forge/
or an adapter: a forge's issues reach it as a function (`ForgeSite.read`).
"""
