"""The model under test: its interface, the streaming OpenAI-compatible client, model configs,
quirks, the latency replay and `--callm-serve`."""
