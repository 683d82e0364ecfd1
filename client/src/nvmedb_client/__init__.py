"""nvmedb-client: run the SNIA PTS with fio and produce a signed, verifiable result bundle."""

__version__ = "0.1.0"
