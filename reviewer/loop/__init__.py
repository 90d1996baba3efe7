"""The agent loop both a review and a verification run (and an answer in a thread): the model
investigates with the seven tools until it calls the loop's final tool, within the review's
budgets. Below `review/` and `checks/`, above `llm/` and `tools/`: it knows no finding, only a
final tool (final.py) that accepts or refuses its call."""
