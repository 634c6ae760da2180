//! Identifiers and secrets: prefixed random ids, random tokens and their hashes.

use rand::RngCore;
use sha2::{Digest, Sha256};

/// A new id such as `ws_3f9c…`: a short prefix that names the kind, then 128 random bits.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}

/// A URL-safe random secret of `bytes` bytes.
pub fn random_token(bytes: usize) -> String {
    use base64::Engine;
    let mut buf = vec![0u8; bytes];
    rand::thread_rng().fill_bytes(&mut buf);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf)
}

/// SHA-256 of a secret, hex encoded. Secrets are only ever stored in this form.
pub fn sha256_hex(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}
