"""The ground floor: errors (the whole tree), settings, shared types, the adapter contract
(messages), the clock, redaction and process metrics. Imports nothing of the project."""
