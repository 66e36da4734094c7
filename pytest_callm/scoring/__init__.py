"""From a trajectory to a verdict and figures: the three gates, pass@1 / pass^k, intervals, cost."""
