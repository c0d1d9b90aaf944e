"""Reading provenance back: backends over the embedded store or a SPARQL endpoint,
session views and verification.  The CLI is a shell over this package."""
