"""One call: the engine, the caller (simulated or scripted), the oracle and the trajectory it leaves."""
