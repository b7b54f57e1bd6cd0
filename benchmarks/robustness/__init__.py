"""`peerlint bench robustness`: fault and abuse cases against the real server, parser, index and LLM backend."""
