"""HTTP sources: poll APIs, receive webhooks, scrape Prometheus (docs/connectors/http.md)."""
