//! The one hash of tags and fingerprints: sha256 over NUL-separated parts, in hex. A dependency
//! fingerprint (`env.rs`) and an image tag (in `swe-forge-validate`) hash the same way, so a
//! change here changes every tag.

use sha2::{Digest, Sha256};

/// sha256 of `parts`, each followed by a NUL byte, as 64 lowercase hex digits.
pub fn sha256_hex(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}
