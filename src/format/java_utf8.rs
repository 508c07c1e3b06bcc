//! Bytes read as text the way Java's `new String(bytes, StandardCharsets.UTF_8)` reads them:
//! what kafka-dump-log prints for keys and payloads (`StringDecoder`), header keys
//! (`Utils.utf8`) and the strings of internal-topic records. Pure: it hands out the pieces of
//! the text (valid runs borrowed from the input, U+FFFD for each malformed sequence) and leaves
//! writing them to the caller, so a renderer can copy valid runs straight to its output.
//!
//! Well-formed UTF-8 is the same for Java and Rust; they differ in how many bytes one U+FFFD
//! replaces. The rules, as the JDK's `String.decodeUTF8_UTF16` applies them (JDK 17 to 25;
//! the `sun.nio.cs.UTF_8` decoder follows the same `malformedN` lengths), for a sequence that
//! does not decode, by its first byte:
//! - `80..BF` (a continuation byte with no lead), `C0`, `C1` and `F8..FF`: that byte alone.
//! - `C2..DF` (two-byte lead) not followed by a continuation byte: the lead alone.
//! - `E0..EF` (three-byte lead) with two bytes after it: the lead alone when the next byte is
//!   not a continuation byte or the sequence is overlong (`E0 80..9F`); the lead and the next
//!   byte when only the third byte is wrong; all three when they encode a surrogate
//!   (`ED A0..BF xx`: one U+FFFD, where Rust's lossy decoding gives three). With fewer than
//!   two bytes after it (the end of the input): the lead alone when the next byte is wrong or
//!   overlong, else everything that is left, as one.
//! - `F0..F7` (four-byte lead) with three bytes after it: the lead alone when it is above
//!   `F4`, when the second byte is out of range (`F0 80..8F` overlong, `F4 90..BF` above
//!   U+10FFFF) or not a continuation byte; the lead and one byte when the third is wrong; the
//!   lead and two when the fourth is. With fewer than three after it (the end of the input):
//!   the lead alone when it is above `F4` or the second byte is wrong; else the lead and the
//!   second byte when the third is not a continuation byte, or everything that is left.
//!
//! The bytes after a replaced sequence are read afresh, so each byte that is not part of a
//! replaced sequence is decoded on its own merits.

use std::borrow::Cow;

/// What Java puts in place of a malformed sequence.
pub const REPLACEMENT: &str = "\u{FFFD}";

/// The text of `bytes` as pieces: borrowed valid runs and [`REPLACEMENT`]s, in order.
pub fn pieces(bytes: &[u8]) -> Pieces<'_> {
    // Valid text (most keys and values) in one piece, checked by the standard library's
    // word-at-a-time validation, which beats the chunks' byte-at-a-time walk on ASCII.
    let (from, whole): (&[u8], _) = match std::str::from_utf8(bytes) {
        Ok(s) => (&[], (!s.is_empty()).then_some(s)),
        Err(_) => (bytes, None),
    };
    Pieces {
        from,
        chunks: from.utf8_chunks(),
        at: 0,
        replacement_due: false,
        whole,
    }
}

/// The text of `bytes` as Java decodes it; borrowed when the bytes are valid UTF-8.
pub fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    let mut it = pieces(bytes);
    let Some(first) = it.next() else {
        return Cow::Borrowed("");
    };
    let Some(second) = it.next() else {
        return Cow::Borrowed(first);
    };
    let mut s = String::with_capacity(bytes.len() + 2);
    s.push_str(first);
    s.push_str(second);
    it.for_each(|p| s.push_str(p));
    Cow::Owned(s)
}

/// Iterator of [`pieces`]. Valid runs and malformed sequences come from the standard
/// library's UTF-8 chunks (one pass, no second validation of a run); where Java's
/// replacement covers a different number of bytes than the chunk's invalid part (the
/// surrogates `ED A0..BF`), the chunks start afresh after Java's.
#[derive(Debug, Clone)]
pub struct Pieces<'a> {
    /// The input from where `chunks` started.
    from: &'a [u8],
    chunks: std::str::Utf8Chunks<'a>,
    /// Bytes of `from` that the chunks handed out so far.
    at: usize,
    /// A malformed sequence followed the valid run just handed out.
    replacement_due: bool,
    /// The whole input, when it is valid UTF-8 (then `from` is empty).
    whole: Option<&'a str>,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if let Some(whole) = self.whole.take() {
            return Some(whole);
        }
        if std::mem::take(&mut self.replacement_due) {
            return Some(REPLACEMENT);
        }
        let chunk = self.chunks.next()?;
        let (valid, invalid) = (chunk.valid(), chunk.invalid());
        self.at += valid.len();
        if !invalid.is_empty() {
            let java = malformed_len(&self.from[self.at..]);
            if java == invalid.len() {
                self.at += java;
            } else {
                self.from = &self.from[self.at + java..];
                self.chunks = self.from.utf8_chunks();
                self.at = 0;
            }
            if valid.is_empty() {
                return Some(REPLACEMENT);
            }
            self.replacement_due = true;
        }
        Some(valid)
    }
}

fn is_continuation(b: u8) -> bool {
    b & 0xc0 == 0x80
}

/// How many bytes of `s` (the rest of the input, starting with a sequence that does not
/// decode) one U+FFFD replaces: the rules of the module documentation. Always at least 1.
fn malformed_len(s: &[u8]) -> usize {
    let second = s.get(1).copied();
    match s[0] {
        0xe0..=0xef => {
            // The second byte is wrong when it is no continuation byte or makes an overlong
            // three-byte form (E0 80..9F).
            let second_wrong = |b2: u8| (s[0] == 0xe0 && b2 & 0xe0 == 0x80) || !is_continuation(b2);
            match (second, s.get(2)) {
                (Some(b2), Some(_)) if second_wrong(b2) => 1,
                (Some(_), Some(&b3)) if !is_continuation(b3) => 2,
                // A well-formed surrogate's three bytes.
                (Some(_), Some(_)) => 3,
                (Some(b2), None) if second_wrong(b2) => 1,
                _ => s.len(),
            }
        }
        0xf0..=0xf7 => {
            let b1 = s[0];
            let second_wrong = |b2: u8| {
                b1 > 0xf4
                    || (b1 == 0xf0 && !(0x90..=0xbf).contains(&b2))
                    || (b1 == 0xf4 && b2 & 0xf0 != 0x80)
                    || !is_continuation(b2)
            };
            if s.len() >= 4 {
                if second_wrong(s[1]) {
                    1
                } else if !is_continuation(s[2]) {
                    2
                } else {
                    3
                }
            } else if b1 > 0xf4 || second.is_some_and(second_wrong) {
                1
            } else if s.len() == 3 && !is_continuation(s[2]) {
                2
            } else {
                s.len()
            }
        }
        // A two-byte lead without its continuation byte, a stray continuation byte, C0, C1,
        // F8..FF.
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: &str = REPLACEMENT;

    /// Expectations worked out by hand from the rules of `String.decodeUTF8_UTF16` (JDK 17,
    /// `java.base/java/lang/String.java`), one case per branch.
    fn java(bytes: &[u8]) -> String {
        lossy(bytes).into_owned()
    }

    #[test]
    fn valid_text_is_borrowed_whole() {
        let s = "plain ascii, é, €, 𝄞".as_bytes();
        assert!(matches!(lossy(s), Cow::Borrowed(t) if t.as_bytes() == s));
        assert_eq!(pieces(b"").count(), 0);
        assert_eq!(pieces(b"ab\xffcd").collect::<Vec<_>>(), vec!["ab", R, "cd"]);
    }

    #[test]
    fn lone_bytes_are_one_replacement_each() {
        // Stray continuation bytes, C0/C1 (never leads) and F8..FF: one byte each.
        assert_eq!(java(b"\x80\xbf"), format!("{R}{R}"));
        assert_eq!(java(b"\xc0\xaf"), format!("{R}{R}"));
        assert_eq!(java(b"\xc1\x81a"), format!("{R}{R}a"));
        assert_eq!(java(b"\xf8\x88\x80\x80\x80"), R.repeat(5));
        assert_eq!(java(b"\xfe\xff"), format!("{R}{R}"));
        // A two-byte lead before a non-continuation byte, or at the end.
        assert_eq!(java(b"\xc3a"), format!("{R}a"));
        assert_eq!(java(b"a\xc3"), format!("a{R}"));
    }

    #[test]
    fn surrogates_are_one_replacement_for_three_bytes() {
        // ED A0 80 is U+D800 encoded; Java rejects it as a whole (Rust's lossy: three).
        assert_eq!(java(b"\xed\xa0\x80"), R);
        assert_eq!(java(b"\xed\xbf\xbfz"), format!("{R}z"));
        // A CESU-8 pair (U+D83D U+DE00): two replacements, not one character.
        assert_eq!(java(b"\xed\xa0\xbd\xed\xb8\x80"), format!("{R}{R}"));
        // ED 9F BF is U+D7FF, the last code point before the surrogates: valid.
        assert_eq!(java(b"\xed\x9f\xbf"), "\u{d7ff}");
        assert_ne!(
            String::from_utf8_lossy(b"\xed\xa0\x80"),
            java(b"\xed\xa0\x80")
        );
    }

    #[test]
    fn overlong_forms_replace_the_lead_alone() {
        // E0 80..9F: overlong three-byte; the lead, then each continuation byte on its own.
        assert_eq!(java(b"\xe0\x80\xaf"), R.repeat(3));
        assert_eq!(java(b"\xe0\x9f\xbf"), R.repeat(3));
        // F0 80..8F: overlong four-byte.
        assert_eq!(java(b"\xf0\x80\x80\xaf"), R.repeat(4));
        assert_eq!(java(b"\xf0\x8f\xbf\xbf"), R.repeat(4));
        // C0 AF (overlong '/'): C0 is never a lead.
        assert_eq!(java(b"\xc0\xaf"), R.repeat(2));
    }

    #[test]
    fn out_of_range_four_byte_forms() {
        // F4 90..BF is above U+10FFFF: the lead alone, then three stray continuation bytes.
        assert_eq!(java(b"\xf4\x90\x80\x80"), R.repeat(4));
        assert_eq!(java(b"\xf4\xbf\xbf\xbf"), R.repeat(4));
        // F5..F7 would be above it whatever follows.
        assert_eq!(java(b"\xf5\x80\x80\x80"), R.repeat(4));
        assert_eq!(java(b"\xf7\xbf\xbf\xbf"), R.repeat(4));
        // U+10FFFF itself is valid.
        assert_eq!(java(b"\xf4\x8f\xbf\xbf"), "\u{10ffff}");
    }

    #[test]
    fn broken_sequences_in_the_middle() {
        // Three-byte lead: third byte wrong → lead and second byte as one.
        assert_eq!(java(b"\xe2\x82a"), format!("{R}a"));
        assert_eq!(java(b"\xe2\x82\xe2\x82\xac"), format!("{R}€"));
        // Second byte wrong → the lead alone.
        assert_eq!(java(b"\xe2ab"), format!("{R}ab"));
        // Four-byte lead: fourth wrong → three bytes; third wrong → two; second wrong → one.
        assert_eq!(java(b"\xf0\x9f\x98a"), format!("{R}a"));
        assert_eq!(java(b"\xf0\x9fab"), format!("{R}ab"));
        assert_eq!(java(b"\xf0abc"), format!("{R}abc"));
        assert_eq!(java(b"\xf1\x80\x80\xf0\x9f\x98\x80"), format!("{R}😀"));
    }

    #[test]
    fn truncated_sequences_at_the_end() {
        // Three-byte lead with one good byte left: one replacement for both.
        assert_eq!(java(b"a\xe2\x82"), format!("a{R}"));
        assert_eq!(java(b"a\xe2"), format!("a{R}"));
        // ... but an overlong or wrong second byte is not swallowed.
        assert_eq!(java(b"\xe0\x80"), R.repeat(2));
        assert_eq!(java(b"\xe2a"), format!("{R}a"));
        // Four-byte lead with one or two good bytes left: one replacement.
        assert_eq!(java(b"\xf0\x9f\x98"), R);
        assert_eq!(java(b"\xf0\x9f"), R);
        assert_eq!(java(b"\xf0"), R);
        // Third byte wrong: the lead and the second, then the third on its own.
        assert_eq!(java(b"\xf0\x9fa"), format!("{R}a"));
        assert_eq!(java(b"\xf0\x9f\xf0"), R.repeat(2));
        // Out of range or overlong second byte, or a lead above F4: the lead alone.
        assert_eq!(java(b"\xf4\x90\x80"), R.repeat(3));
        assert_eq!(java(b"\xf0\x8f"), R.repeat(2));
        assert_eq!(java(b"\xf5\x80"), R.repeat(2));
        assert_eq!(java(b"\xf5"), R);
    }

    /// The decoding as first written (a valid prefix by `from_utf8`, then Java's malformed
    /// length): the model the chunked iterator must agree with, piece for piece.
    fn model(mut rest: &[u8]) -> Vec<&str> {
        let mut out = Vec::new();
        while !rest.is_empty() {
            let valid = match std::str::from_utf8(rest) {
                Ok(s) => s,
                Err(e) => std::str::from_utf8(&rest[..e.valid_up_to()]).unwrap(),
            };
            if !valid.is_empty() {
                out.push(valid);
                rest = &rest[valid.len()..];
            } else {
                out.push(R);
                rest = &rest[malformed_len(rest)..];
            }
        }
        out
    }

    #[test]
    fn chunked_pieces_agree_with_the_model() {
        // Random bytes biased towards the lead and continuation bytes where the rules differ.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let alphabet = [
            0x41, 0x80, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4,
            0xf5, 0xff,
        ];
        for _ in 0..20_000 {
            let len = (next() % 12) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    let r = next();
                    if r & 1 == 0 {
                        alphabet[(r >> 8) as usize % alphabet.len()]
                    } else {
                        (r >> 16) as u8
                    }
                })
                .collect();
            assert_eq!(
                pieces(&bytes).collect::<Vec<_>>(),
                model(&bytes),
                "{bytes:02x?}"
            );
        }
    }
}
