"""The turn loop: the engine, generation strategies, evidence folders and packets, the judging phase, records."""
