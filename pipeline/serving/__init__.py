"""A shield on a live decision path, answered by a call: the HTTP server and where its records go."""
