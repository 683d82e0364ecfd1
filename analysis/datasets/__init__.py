"""Downloads: live filtered exports, versioned releases, and the read API."""
