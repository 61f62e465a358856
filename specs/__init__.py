"""Executable Hoare triples: specs/<name>.py pairs with impl/<name>.py and proofs/<name>.md."""
