"""HTTP routers: thin layers that validate, call domain functions and persist."""
