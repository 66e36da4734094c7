"""CALLM as a reinforcement-learning environment (`environment.py`) and its adapters."""
