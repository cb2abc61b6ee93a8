"""The ``recommender`` command line: one module per command, each calling the services."""
