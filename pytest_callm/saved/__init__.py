"""Saved runs: the run directory (`rundir`: manifest, lock, trajectories), what a saved attempt
leaves out and gets back (`slim`, `seed_state`), shards joined (`merge`) and release pins (`release`)."""
