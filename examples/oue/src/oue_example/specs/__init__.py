"""The specs of oue_example: one module per mechanism, paired by stem with proofs/<stem>.md."""
