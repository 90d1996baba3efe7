"""Settings: flags, `.reviewer.toml`, environment variables, rule files, the ignore file and model
prices, merged into one validated `Settings` before anything runs.
"""
