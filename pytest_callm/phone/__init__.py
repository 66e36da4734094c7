"""The simulated phone line between the caller and the model: kinds of caller turn, the error
profile, the errors, sound-alikes, spoken numbers, profile fitting and the rewriter."""
