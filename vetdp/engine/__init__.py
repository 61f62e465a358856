"""The verification engine: exact enumeration, divergences, spec checking, reports."""
