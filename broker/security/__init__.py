"""Who a connection is and what it may do: listeners, TLS, SASL, ACLs and quotas (issue 21)."""
