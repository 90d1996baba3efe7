"""What only this repository's tests and maintainers use, kept out of the shipped fakes
(`reviewer.testing`, which is for users' own tests too)."""
