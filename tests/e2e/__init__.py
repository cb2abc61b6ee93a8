"""End-to-end tests of the chair web page (a package, so its conftest does not shadow others)."""
