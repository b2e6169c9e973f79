"""The foundation room: what every other room builds on and that is no robot concept itself —
SE(3) algebra (spatial.py), the one bounded YAML loader (safe_yaml.py), bounded log lines about bad
messages (log_text.py), file locks between processes (file_locks.py)."""
