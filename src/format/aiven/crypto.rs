//! Encryption (`security/*.java`, `transform/*Encryption*.java`). Each segment has its own
//! 256-bit AES data key and a 32-byte AAD (both random). A transformed chunk is the 12-byte IV
//! (random per chunk), then AES-256-GCM of the chunk with the segment's AAD, the 16-byte tag at
//! the end (as Java's `AES/GCM/NoPadding` appends it). The data key is stored in the manifest
//! wrapped with an RSA public key, as `{keyId}:{base64}`: RSA-OAEP with SHA3-512 as both hash
//! and MGF1 hash and an empty label (BouncyCastle's `OAEPWithSHA3-512AndMGF1Padding`). Keys are
//! PEM: public SubjectPublicKeyInfo, private PKCS#8 (PKCS#1 is accepted too).

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use rsa::pkcs1::{DecodeRsaPrivateKey, DecodeRsaPublicKey};
use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey};
use rsa::rand_core::CryptoRngCore;
use rsa::{Oaep, RsaPrivateKey, RsaPublicKey};

use crate::format::error::{DecodeError, ErrorKind, Result};

pub const IV_BYTES: usize = 12;
pub const TAG_BYTES: usize = 16;
pub const DATA_KEY_BYTES: usize = 32;
/// What encryption adds to a chunk.
pub const OVERHEAD: usize = IV_BYTES + TAG_BYTES;

fn oaep() -> Oaep {
    Oaep::new_with_mgf_hash::<sha3::Sha3_512, sha3::Sha3_512>()
}

/// A segment's data key and AAD, in clear.
#[derive(Clone, PartialEq, Eq)]
pub struct DataKey {
    pub key: [u8; DATA_KEY_BYTES],
    pub aad: Vec<u8>,
}

impl std::fmt::Debug for DataKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DataKey(..)")
    }
}

impl DataKey {
    /// A new key and AAD, as the plugin makes one per segment.
    pub fn random(rng: &mut impl CryptoRngCore) -> DataKey {
        let mut key = [0u8; DATA_KEY_BYTES];
        rng.fill_bytes(&mut key);
        let mut aad = vec![0u8; DATA_KEY_BYTES];
        rng.fill_bytes(&mut aad);
        DataKey { key, aad }
    }

    /// IV, ciphertext, tag.
    pub fn encrypt(&self, iv: [u8; IV_BYTES], plain: &[u8]) -> Vec<u8> {
        let cipher = Aes256Gcm::new((&self.key).into());
        let sealed = cipher
            .encrypt(
                Nonce::from_slice(&iv),
                Payload {
                    msg: plain,
                    aad: &self.aad,
                },
            )
            .expect("AES-GCM seals any buffer below 64 GiB");
        let mut out = Vec::with_capacity(IV_BYTES + sealed.len());
        out.extend_from_slice(&iv);
        out.extend_from_slice(&sealed);
        out
    }

    pub fn encrypt_random_iv(&self, rng: &mut impl CryptoRngCore, plain: &[u8]) -> Vec<u8> {
        let mut iv = [0u8; IV_BYTES];
        rng.fill_bytes(&mut iv);
        self.encrypt(iv, plain)
    }

    /// The inverse of [`DataKey::encrypt`]; a tag that does not match is an error (wrong key,
    /// AAD or damaged bytes: GCM cannot tell which).
    pub fn decrypt(&self, sealed: &[u8]) -> Result<Vec<u8>> {
        if sealed.len() < OVERHEAD {
            return Err(DecodeError::truncated(
                0,
                OVERHEAD,
                sealed.len(),
                "encrypted chunk (IV and tag)",
            ));
        }
        let cipher = Aes256Gcm::new((&self.key).into());
        cipher
            .decrypt(
                Nonce::from_slice(&sealed[..IV_BYTES]),
                Payload {
                    msg: &sealed[IV_BYTES..],
                    aad: &self.aad,
                },
            )
            .map_err(|_| {
                DecodeError::new(
                    ErrorKind::BadChecksum,
                    sealed.len() - TAG_BYTES,
                    "AES-GCM tag does not match: damaged chunk, or another data key or AAD",
                )
            })
    }
}

/// A data key as the manifest stores it: the id of the RSA key pair and the wrapped bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrappedKey {
    pub key_id: String,
    pub wrapped: Vec<u8>,
}

impl WrappedKey {
    pub fn wrap(
        key_id: &str,
        public: &RsaPublicKey,
        data_key: &[u8],
        rng: &mut impl CryptoRngCore,
    ) -> Result<WrappedKey> {
        let wrapped = public.encrypt(rng, oaep(), data_key).map_err(|e| {
            DecodeError::new(
                ErrorKind::BadValue,
                0,
                format!("RSA key {key_id:?} cannot wrap a data key: {e}"),
            )
        })?;
        Ok(WrappedKey {
            key_id: key_id.to_string(),
            wrapped,
        })
    }

    /// `{keyId}:{base64}`.
    pub fn to_text(&self) -> String {
        format!(
            "{}:{}",
            self.key_id,
            base64::engine::general_purpose::STANDARD.encode(&self.wrapped)
        )
    }

    /// As `EncryptedDataKey.parse`: exactly one colon, a non-blank id, non-empty base64.
    pub fn parse(text: &str) -> Result<WrappedKey> {
        let bad = |pos: usize, m: &str| {
            DecodeError::new(
                ErrorKind::Malformed,
                pos,
                format!("encryption.dataKey {m}: expected {{keyId}}:{{base64}}"),
            )
        };
        let Some((id, b64)) = text.split_once(':') else {
            return Err(bad(0, "has no ':'"));
        };
        if b64.contains(':') {
            return Err(bad(id.len() + 1, "has more than one ':'"));
        }
        if id.trim().is_empty() {
            return Err(bad(0, "has a blank key id"));
        }
        let wrapped = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|_| bad(id.len() + 1, "is not base64 after the ':'"))?;
        if wrapped.is_empty() {
            return Err(bad(id.len() + 1, "is empty after the ':'"));
        }
        Ok(WrappedKey {
            key_id: id.to_string(),
            wrapped,
        })
    }
}

/// The private keys a reader was given, each with the key id it answers to (`None`: any id).
#[derive(Default, Clone)]
pub struct KeyRing {
    keys: Vec<(Option<String>, RsaPrivateKey)>,
}

impl KeyRing {
    pub fn add(&mut self, key_id: Option<String>, key: RsaPrivateKey) {
        self.keys.push((key_id, key));
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The data key; keys named by the wrapped key's id are tried first, then unnamed ones.
    pub fn unwrap(&self, wrapped: &WrappedKey, aad: Vec<u8>) -> Result<DataKey> {
        let named = self
            .keys
            .iter()
            .filter(|(id, _)| id.as_deref() == Some(wrapped.key_id.as_str()));
        let unnamed = self.keys.iter().filter(|(id, _)| id.is_none());
        let mut tried = 0;
        for (_, key) in named.chain(unnamed) {
            tried += 1;
            if let Ok(bytes) = key.decrypt(oaep(), &wrapped.wrapped) {
                let key: [u8; DATA_KEY_BYTES] = bytes.as_slice().try_into().map_err(|_| {
                    DecodeError::new(
                        ErrorKind::BadValue,
                        0,
                        format!(
                            "the data key is {} bytes; AES-256 needs {DATA_KEY_BYTES}",
                            bytes.len()
                        ),
                    )
                })?;
                return Ok(DataKey { key, aad });
            }
        }
        Err(DecodeError::new(
            ErrorKind::BadValue,
            0,
            if tried == 0 {
                format!(
                    "the data key is wrapped with key {:?} and no private key was given for it",
                    wrapped.key_id
                )
            } else {
                format!(
                    "none of the {tried} private key(s) given unwraps the data key of key {:?}",
                    wrapped.key_id
                )
            },
        ))
    }
}

fn pem_error(what: &str, e: impl std::fmt::Display) -> DecodeError {
    DecodeError::new(
        ErrorKind::Malformed,
        0,
        format!("expected a PEM {what}: {e}"),
    )
}

/// `-----BEGIN PRIVATE KEY-----` (PKCS#8, what the plugin reads) or `BEGIN RSA PRIVATE KEY`.
pub fn private_key_from_pem(text: &str) -> Result<RsaPrivateKey> {
    RsaPrivateKey::from_pkcs8_pem(text)
        .or_else(|e| RsaPrivateKey::from_pkcs1_pem(text).map_err(|_| e))
        .map_err(|e| pem_error("RSA private key (PKCS#8 or PKCS#1)", e))
}

/// `-----BEGIN PUBLIC KEY-----` (SubjectPublicKeyInfo, what the plugin reads) or `BEGIN RSA
/// PUBLIC KEY`; a private key gives its public half.
pub fn public_key_from_pem(text: &str) -> Result<RsaPublicKey> {
    RsaPublicKey::from_public_key_pem(text)
        .or_else(|e| RsaPublicKey::from_pkcs1_pem(text).map_err(|_| e))
        .map_err(|e| e.to_string())
        .or_else(|e| {
            private_key_from_pem(text)
                .map(|k| k.to_public_key())
                .map_err(|_| e)
        })
        .map_err(|e| pem_error("RSA public key (SubjectPublicKeyInfo or PKCS#1)", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_layout_is_iv_then_ciphertext_then_tag() {
        let key = DataKey {
            key: [7; 32],
            aad: vec![1, 2, 3],
        };
        let sealed = key.encrypt([9; 12], b"hello");
        assert_eq!(sealed.len(), 5 + OVERHEAD);
        assert_eq!(&sealed[..12], &[9; 12]);
        assert_eq!(key.decrypt(&sealed).unwrap(), b"hello");
        let other_aad = DataKey {
            key: [7; 32],
            aad: vec![1, 2],
        };
        assert_eq!(
            other_aad.decrypt(&sealed).unwrap_err().kind,
            ErrorKind::BadChecksum
        );
        assert_eq!(
            key.decrypt(&sealed[..27]).unwrap_err().kind,
            ErrorKind::Truncated
        );
    }

    #[test]
    fn wrapped_key_text_follows_the_plugin_rules() {
        let w = WrappedKey::parse("key1:AAEC").unwrap();
        assert_eq!(
            (w.key_id.as_str(), w.wrapped.as_slice()),
            ("key1", &[0u8, 1, 2][..])
        );
        assert_eq!(w.to_text(), "key1:AAEC");
        for bad in ["AAEC", "a:b:AAEC", " :AAEC", "k:", "k:!!"] {
            assert!(WrappedKey::parse(bad).is_err(), "{bad}");
        }
    }
}
