//! Credential stores: keyring, file, memory, auto.
