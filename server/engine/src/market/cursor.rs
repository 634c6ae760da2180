//! Sealed pagination cursors: `base64url(payload).base64url(HMAC-SHA256(secret, payload))`.
//! The payload binds the cursor to the kind and to a hash of query + filters + sort,
//! so reusing it with other filters is `CURSOR_QUERY_MISMATCH`, and a forged,
//! tampered or expired one is `CURSOR_INVALID`. Never a silent restart.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use luna_protocol::error::ErrorCode;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::base::error::{EngineError, EngineResult};

type HmacSha256 = Hmac<Sha256>;

/// How long a cursor stays valid.
pub const CURSOR_TTL_SECS: i64 = 6 * 3600;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Payload {
    v: u8,
    /// Kind key.
    k: String,
    /// Hex of the first 16 bytes of SHA-256 over the canonical query.
    h: String,
    /// Offset of the next page.
    o: u64,
    /// Expiry, unix seconds.
    e: i64,
}

/// Hash of the canonical query description (kind + query + resolved filters + sort).
pub fn query_hash(canonical: &str) -> String {
    hex::encode(&Sha256::digest(canonical.as_bytes())[..16])
}

fn mac(secret: &[u8], data: &[u8]) -> EngineResult<HmacSha256> {
    let mut m = HmacSha256::new_from_slice(secret)
        .map_err(|e| EngineError::Internal(format!("cursor key: {e}")))?;
    m.update(data);
    Ok(m)
}

/// Seals the cursor for the page starting at `offset`.
pub fn seal(secret: &[u8], kind: &str, hash: &str, offset: u64, now: i64) -> EngineResult<String> {
    let payload = Payload {
        v: 1,
        k: kind.to_string(),
        h: hash.to_string(),
        o: offset,
        e: now + CURSOR_TTL_SECS,
    };
    let bytes =
        serde_json::to_vec(&payload).map_err(|e| EngineError::Internal(format!("cursor: {e}")))?;
    let tag = mac(secret, &bytes)?.finalize().into_bytes();
    Ok(format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(&bytes),
        URL_SAFE_NO_PAD.encode(tag)
    ))
}

fn invalid() -> EngineError {
    EngineError::typed(
        ErrorCode::CursorInvalid,
        "El cursor no es válido o ya expiró.",
        "Repite la búsqueda sin cursor para empezar desde la primera página.",
    )
}

/// Opens a cursor and returns the offset it points to.
pub fn open(secret: &[u8], token: &str, kind: &str, hash: &str, now: i64) -> EngineResult<u64> {
    let (body, tag) = token.trim().split_once('.').ok_or_else(invalid)?;
    let bytes = URL_SAFE_NO_PAD.decode(body).map_err(|_| invalid())?;
    let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| invalid())?;
    mac(secret, &bytes)?
        .verify_slice(&tag)
        .map_err(|_| invalid())?;
    let payload: Payload = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    if payload.v != 1 || payload.e < now {
        return Err(invalid());
    }
    if payload.k != kind || payload.h != hash {
        return Err(EngineError::typed(
            ErrorCode::CursorQueryMismatch,
            "El cursor pertenece a otra búsqueda (otro tipo, texto o filtros).",
            "Usa el cursor solo con la misma búsqueda y filtros; si cambiaste los filtros, empieza sin cursor.",
        ));
    }
    Ok(payload.o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_mismatch_forgery_and_expiry() {
        let key = b"secret";
        let h = query_hash("suppliers|q|{}");
        let c = seal(key, "suppliers", &h, 40, 1000).unwrap();
        assert_eq!(open(key, &c, "suppliers", &h, 1001).unwrap(), 40);
        let other = query_hash("suppliers|q|{state:14}");
        assert_eq!(
            open(key, &c, "suppliers", &other, 1001).unwrap_err().code(),
            ErrorCode::CursorQueryMismatch
        );
        assert_eq!(
            open(b"other", &c, "suppliers", &h, 1001)
                .unwrap_err()
                .code(),
            ErrorCode::CursorInvalid
        );
        assert_eq!(
            open(key, &c, "suppliers", &h, 1000 + CURSOR_TTL_SECS + 1)
                .unwrap_err()
                .code(),
            ErrorCode::CursorInvalid
        );
        // Tampered payload with the old tag.
        let (_, tag) = c.split_once('.').unwrap();
        let forged = format!(
            "{}.{tag}",
            URL_SAFE_NO_PAD.encode(br#"{"v":1,"k":"suppliers","h":"x","o":0,"e":9999999999}"#)
        );
        assert_eq!(
            open(key, &forged, "suppliers", &h, 1001)
                .unwrap_err()
                .code(),
            ErrorCode::CursorInvalid
        );
        assert_eq!(
            open(key, "garbage", "suppliers", &h, 1001)
                .unwrap_err()
                .code(),
            ErrorCode::CursorInvalid
        );
    }
}
