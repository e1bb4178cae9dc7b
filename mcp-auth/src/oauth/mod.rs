//! OAuth 2.1 client: discovery, registration, PKCE login, refresh, status.
