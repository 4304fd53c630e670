//! The fast path for the common line: a well-formed `o` record read eight
//! bytes at a time (SWAR: delimiters, hex digits and their value found with
//! word arithmetic), tokenizer and number parser in one pass. Anything
//! unusual falls back to the general per-line parser of [`super::lines`],
//! which explains what is wrong.

use super::lines::{is_blank, push_object, Chunk, HEX};
use super::MAX_OBJECT_BYTES;

/// One hexadecimal element scanned in place.
pub(super) enum Scan {
    Value(u64),
    End,
    Bad,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Eight bytes as one little-endian word (the first byte lowest).
#[inline(always)]
fn word(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes[..8].try_into().unwrap())
}

/// The high bit of every byte of `w` below 0x21 (blanks, line ends and other
/// control bytes). Exact up to the first such byte, which is all we use.
#[inline(always)]
fn delimiters(w: u64) -> u64 {
    w.wrapping_sub(ONES * 0x21) & !w & HIGHS
}

/// The high bit of every byte of `w` that is a hexadecimal digit. Each step
/// stays within its byte: no carry or borrow crosses into the next one.
#[inline(always)]
fn hex_digits(w: u64) -> u64 {
    let lower = w | (ONES * 0x20); // 'A'..'F' → 'a'..'f'; digits unchanged
    let t = lower & !HIGHS;
    let ge = |c: u64| (t + ONES * (0x80 - c)) & HIGHS;
    let le = |c: u64| ((ONES * (0x80 + c)) - t) & HIGHS;
    ((ge(0x30) & le(0x39)) | (ge(0x61) & le(0x66))) & !(lower & HIGHS)
}

/// The value of the first `len` (1..=8) hexadecimal digits of `w`, which
/// `hex_digits` has checked.
#[inline(always)]
fn hex_value(w: u64, len: usize) -> u64 {
    // '0'..'9' keep their low nibble; letters have bit 6 set and add 9.
    let nibbles = (w & (ONES * 0x0f)) + ((w >> 6) & ONES) * 9;
    // Right-align: the last digit in the top byte, zeros (leading) below.
    let v = nibbles << ((8 - len) * 8);
    // Merge neighbours with one multiply each: bytes into 16-bit pairs,
    // pairs into 32-bit quads, quads into the result (the lower address is
    // the higher digit). The partial products never overlap, so no carry
    // crosses a lane; the mask drops the copies that land above it.
    let v = (v.wrapping_mul(1 + (16 << 8)) >> 8) & 0x00ff_00ff_00ff_00ff;
    let v = (v.wrapping_mul(1 + (256 << 16)) >> 16) & 0x0000_ffff_0000_ffff;
    (v.wrapping_mul(1 + (1 << 48)) >> 32) & 0xffff_ffff
}

/// A hexadecimal element of 1 to 16 digits at the start of `bytes` (at least
/// 16 bytes), eight bytes at a time: `(value, length)`, or `None` when the
/// element is longer or holds a byte that is not a digit (the byte-wise scan
/// then decides).
#[inline(always)]
fn hex_word(bytes: &[u8]) -> Option<(u64, usize)> {
    let w0 = word(bytes);
    let d0 = delimiters(w0);
    if d0 != 0 {
        let len = d0.trailing_zeros() as usize / 8;
        let mask = HIGHS & ((1u64 << (len * 8)) - 1);
        if len == 0 || hex_digits(w0) & mask != mask {
            return None;
        }
        return Some((hex_value(w0, len), len));
    }
    let w1 = word(&bytes[8..]);
    let d1 = delimiters(w1);
    if d1 == 0 || hex_digits(w0) != HIGHS {
        return None;
    }
    let len = d1.trailing_zeros() as usize / 8;
    if len == 0 {
        return Some((hex_value(w0, 8), 8));
    }
    let mask = HIGHS & ((1u64 << (len * 8)) - 1);
    if hex_digits(w1) & mask != mask {
        return None;
    }
    Some((hex_value(w0, 8) << (4 * len) | hex_value(w1, len), 8 + len))
}

/// Skips blanks, then reads one hexadecimal element of the line that `pos`
/// is in (a line ends at `\n` or at the end of `text`): the tokenizer and
/// the number parser in a single pass over the bytes.
#[inline(always)]
fn scan_hex(text: &[u8], pos: &mut usize) -> Scan {
    let mut p = *pos;
    while p < text.len() && is_blank(text[p]) {
        p += 1;
    }
    if p == text.len() || text[p] == b'\n' {
        *pos = p;
        return Scan::End;
    }
    if let Some(bytes) = text.get(p..p + 16) {
        if let Some((v, len)) = hex_word(bytes) {
            *pos = match bytes[len] {
                // The usual single blank: step over it here.
                b' ' => p + len + 1,
                next if is_blank(next) || next == b'\n' => p + len,
                _ => return Scan::Bad,
            };
            return Scan::Value(v);
        }
    }
    let start = p;
    let mut v = 0u64;
    while p < text.len() {
        let d = HEX[text[p] as usize];
        if d == 0xff {
            break;
        }
        if v > u64::MAX >> 4 {
            return Scan::Bad;
        }
        v = (v << 4) | d as u64;
        p += 1;
    }
    if p < text.len() && !is_blank(text[p]) && text[p] != b'\n' || p == start {
        return Scan::Bad;
    }
    *pos = p;
    Scan::Value(v)
}

/// The common case of an `o` line starting at `start`, well formed, without
/// building tokens: the position after its line end, or `None` (having
/// stored nothing) for anything unusual, which the general path then parses
/// and explains.
#[inline]
pub(super) fn parse_object_fast(
    c: &mut Chunk,
    text: &[u8],
    start: usize,
    no: u32,
    marker: u32,
) -> Option<usize> {
    if text[start] != b'o' || !text.get(start + 1).is_some_and(|&b| is_blank(b)) {
        return None;
    }
    let mut pos = start + 1;
    let mut head = [0u64; 3];
    for h in &mut head {
        match scan_hex(text, &mut pos) {
            Scan::Value(v) => *h = v,
            _ => return None,
        }
    }
    if head[2] > MAX_OBJECT_BYTES {
        return None;
    }
    let before = c.open.refs.len();
    loop {
        match scan_hex(text, &mut pos) {
            Scan::Value(v) => c.open.refs.push(v),
            Scan::End => break,
            Scan::Bad => {
                c.open.refs.truncate(before);
                return None;
            }
        }
    }
    push_object(c, head, (c.open.refs.len() - before) as u32, no, marker);
    Some(pos + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::netcf_text::lines::hex;

    /// The element `scan_hex` must find: blanks skipped, then the bytes up
    /// to the next blank or line end, read by `hex`.
    fn scan_reference(text: &[u8], pos: usize) -> (Option<Option<u64>>, usize) {
        let mut p = pos;
        while p < text.len() && is_blank(text[p]) {
            p += 1;
        }
        if p == text.len() || text[p] == b'\n' {
            return (None, p);
        }
        let start = p;
        while p < text.len() && !is_blank(text[p]) && text[p] != b'\n' {
            p += 1;
        }
        (Some(hex(&text[start..p])), p)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]
        /// Eight bytes at a time and byte by byte agree, on elements of every
        /// length near the word sizes, with letters of both cases, bad
        /// digits, control bytes, non-ASCII bytes and line ends around them.
        #[test]
        fn word_scan_agrees_with_bytewise_scan(
            text in proptest::collection::vec(
                proptest::sample::select(&b"0123456789abcdefABCDEF0f0f0f \t\r\ngGxX@`/:\x00\x01\x0b\x1f\x20\x21\x7f\x80\xb0\xe6\xff"[..]),
                0..40,
            ),
            pad in 0usize..20,
        ) {
            let mut text = text;
            text.extend(std::iter::repeat_n(b' ', pad));
            for pos in 0..text.len() {
                let mut p = pos;
                let got = scan_hex(&text, &mut p);
                let (want, end) = scan_reference(&text, pos);
                match (got, want) {
                    (Scan::End, None) => proptest::prop_assert_eq!(p, end),
                    (Scan::Value(v), Some(Some(w))) => {
                        proptest::prop_assert_eq!(v, w);
                        // At the element's end, or past the one blank after it.
                        proptest::prop_assert!(p == end || p == end + 1 && text[end] == b' ');
                    }
                    (Scan::Bad, Some(None)) => {}
                    (got, want) => proptest::prop_assert!(
                        false,
                        "at {pos} of {text:?}: got {}, want {want:?}",
                        match got {
                            Scan::End => "end".to_string(),
                            Scan::Bad => "bad".to_string(),
                            Scan::Value(v) => format!("{v:x}"),
                        }
                    ),
                }
            }
        }
    }

    #[test]
    fn word_scan_reads_every_length() {
        for len in 1..=16 {
            let digits = &b"fedcba9876543210"[..len];
            let want = u64::from_str_radix(std::str::from_utf8(digits).unwrap(), 16).unwrap();
            let mut text = digits.to_vec();
            text.extend_from_slice(b" 1                ");
            let mut pos = 0;
            assert!(matches!(scan_hex(&text, &mut pos), Scan::Value(v) if v == want));
            assert!(pos == len || pos == len + 1, "{len}: {pos}");
            assert!(matches!(scan_hex(&text, &mut pos), Scan::Value(1)));
            assert!(matches!(scan_hex(&text, &mut pos), Scan::End));
        }
    }
}
