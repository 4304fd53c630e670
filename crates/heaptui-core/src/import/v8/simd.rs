//! The number arrays' fast path on x86-64 with AVX2: numbers found by bit
//! masks, so that where a number starts never waits on the digits of the
//! one before, and parsed 16 digits at a time in SSE registers.
//!
//! The byte-at-a-time reader (`numbers::Cursor`) finds each number's end
//! from its digits, then the next number's start from that end: one long
//! chain of dependent steps per number, about 20 cycles. Here a window of
//! 64 bytes is classified at once (digits, commas, anything that is neither
//! nor whitespace), each number's start and length come from the digit mask
//! with a few bit operations, and each number's value from one 16-byte load
//! (Muła and Lemire's multiply-add reduction of digit pairs, then quads,
//! then octets). The windows check the same grammar as the reader: digits
//! only, exactly one comma between numbers, whitespace anywhere. A window
//! that breaks it, or a number of 16 digits or more, stops the fast path
//! where it is; the reader then takes the next number and reports any
//! error with its offset.
//!
//! This module is allowed `unsafe` (the crate root denies it elsewhere) for
//! two things only: calling the AVX2 functions, which a [`Simd`] value
//! proves the CPU has, and unaligned loads from references that hold the
//! bytes loaded.
#![allow(unsafe_code)]

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Proof that the CPU runs AVX2 code (and carry-less multiplication, which
/// every AVX2 CPU has); only [`Simd::detect`] makes one.
#[derive(Debug, Clone, Copy)]
pub struct Simd(());

impl Simd {
    /// The fast path, where this CPU has it.
    pub fn detect() -> Option<Simd> {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("pclmulqdq") {
            return Some(Simd(()));
        }
        None
    }
}

/// A window, plus the 16 bytes a number starting in its last byte loads.
#[cfg(target_arch = "x86_64")]
const WINDOW: usize = 64;
#[cfg(target_arch = "x86_64")]
const READ: usize = WINDOW + 16;

/// Parses numbers from `bytes[*pos..end]` into `out`, 64-byte windows at a
/// time, while a whole window (and the 16 bytes after it) lies before `end`
/// and `out` has room for one. `*pos` must be just after a number's last
/// digit, or at a chunk's start with `*first` set (then no comma comes
/// first). Returns how many numbers it wrote; `*pos` and `*first` are moved
/// past them, as the byte-at-a-time reader would have moved them.
pub fn numbers(
    simd: Simd,
    bytes: &[u8],
    pos: &mut usize,
    first: &mut bool,
    end: usize,
    out: &mut [u64],
) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let _ = simd;
        // SAFETY: a `Simd` exists only where the CPU has AVX2 and PCLMULQDQ.
        unsafe { numbers_avx2(bytes, pos, first, end.min(bytes.len()), out) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (simd, bytes, pos, first, end, out);
        0
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,pclmulqdq")]
fn numbers_avx2(
    bytes: &[u8],
    pos: &mut usize,
    first: &mut bool,
    end: usize,
    out: &mut [u64],
) -> usize {
    let mut n = 0;
    while n + WINDOW / 2 <= out.len() && *pos + READ <= end {
        let Some(window) = bytes.get(*pos..*pos + READ) else {
            break;
        };
        let window: &[u8; READ] = window.try_into().expect("READ bytes");
        let (digits, commas, other) = classify(window);
        let starts = digits & !(digits << 1);
        // A number running into the window's last byte may go on: leave
        // it (and what follows) to the next window.
        let before = if digits >> 63 != 0 {
            let last = 63 - starts.leading_zeros();
            (1u64 << last) - 1
        } else {
            u64::MAX
        };
        let starts = starts & before;
        let commas = commas & before;
        if starts == 0 || other & before != 0 {
            break;
        }
        // Numbers and commas must alternate, a comma first unless this is
        // the chunk's first number: at a number the count of tokens so far
        // (itself included) is odd after a leading comma, even otherwise.
        let parity = prefix_xor(starts | commas);
        let at_number = if *first { parity } else { !parity };
        if starts & !at_number != 0 || commas & at_number != 0 {
            break;
        }
        let mut left = starts;
        let mut last_end = None;
        let mut long = false;
        while left != 0 {
            let i = left.trailing_zeros() as usize;
            left &= left - 1;
            let len = (!(digits >> i)).trailing_zeros() as usize;
            if len >= 16 {
                long = true;
                break;
            }
            let at: &[u8; 16] = window[i..i + 16].try_into().expect("16 bytes");
            out[n] = parse16(at, len);
            n += 1;
            last_end = Some(i + len);
        }
        let Some(last_end) = last_end else {
            break;
        };
        *pos += last_end;
        *first = false;
        if long {
            break; // the byte reader takes it
        }
    }
    n
}

/// Bit masks of `window[..64]`: its digits, its commas, and its bytes that
/// are neither nor whitespace.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn classify(window: &[u8; READ]) -> (u64, u64, u64) {
    let half = |h: usize| {
        let b: &[u8; 32] = window[32 * h..32 * h + 32].try_into().expect("32 bytes");
        // SAFETY: `b` holds the 32 bytes loaded.
        let x = unsafe { _mm256_loadu_si256(b.as_ptr().cast()) };
        let eq = |c: u8| _mm256_cmpeq_epi8(x, _mm256_set1_epi8(c as i8));
        let v = _mm256_sub_epi8(x, _mm256_set1_epi8(b'0' as i8));
        let digit = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(9)), v);
        let comma = eq(b',');
        let space = _mm256_or_si256(
            _mm256_or_si256(eq(b' '), eq(b'\n')),
            _mm256_or_si256(eq(b'\r'), eq(b'\t')),
        );
        let known = _mm256_or_si256(_mm256_or_si256(digit, comma), space);
        let bits = |m| _mm256_movemask_epi8(m) as u32 as u64;
        (bits(digit), bits(comma), !bits(known) & 0xFFFF_FFFF)
    };
    let (d0, c0, o0) = half(0);
    let (d1, c1, o1) = half(1);
    (d0 | d1 << 32, c0 | c1 << 32, o0 | o1 << 32)
}

/// Bit `i` of the result: the parity of bits `0..=i` of `x` (a carry-less
/// multiplication by all ones).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,pclmulqdq")]
fn prefix_xor(x: u64) -> u64 {
    let p = _mm_clmulepi64_si128(_mm_set_epi64x(0, x as i64), _mm_set1_epi8(-1), 0);
    _mm_cvtsi128_si64(p) as u64
}

/// Byte shuffles that move a number's `len` leading bytes to the end of the
/// register and zero the bytes before them.
#[cfg(target_arch = "x86_64")]
const ALIGN_RIGHT: [[u8; 16]; 16] = {
    let mut t = [[0x80u8; 16]; 16];
    let mut len = 0;
    while len < 16 {
        let mut i = 16 - len;
        while i < 16 {
            t[len][i] = (i + len - 16) as u8;
            i += 1;
        }
        len += 1;
    }
    t
};

/// The value of the `len` (1 to 15) digits at the start of `at`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn parse16(at: &[u8; 16], len: usize) -> u64 {
    // SAFETY: `at` and the table row hold the 16 bytes loaded.
    let (raw, shuffle) = unsafe {
        (
            _mm_loadu_si128(at.as_ptr().cast()),
            _mm_loadu_si128(ALIGN_RIGHT[len].as_ptr().cast()),
        )
    };
    let v = _mm_shuffle_epi8(_mm_sub_epi8(raw, _mm_set1_epi8(b'0' as i8)), shuffle);
    let pairs = _mm_maddubs_epi16(v, _mm_set1_epi16(0x010A));
    let quads = _mm_madd_epi16(pairs, _mm_set1_epi32(0x0001_0064));
    let quads = _mm_packus_epi32(quads, quads);
    let octets = _mm_madd_epi16(quads, _mm_set1_epi32(0x0001_2710));
    let both = _mm_cvtsi128_si64(octets) as u64;
    (both & 0xFFFF_FFFF) * 100_000_000 + (both >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn prefix_xor_is_the_running_parity() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..1000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let want = (0..64).fold(0u64, |acc, i| {
                acc | (((x & ((2u128 << i) - 1) as u64).count_ones() as u64 & 1) << i)
            });
            // SAFETY: `detect` found both features.
            if Simd::detect().is_some() {
                assert_eq!(unsafe { prefix_xor(x) }, want);
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn sixteen_byte_parse_agrees_with_the_digits() {
        let Some(_) = Simd::detect() else {
            return; // no AVX2 here: the byte reader alone runs
        };
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for len in 1..16 {
            for _ in 0..500 {
                let mut at = [b','; 16];
                let mut want = 0u64;
                for b in at.iter_mut().take(len) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let d = (x % 10) as u8;
                    *b = b'0' + d;
                    want = want * 10 + d as u64;
                }
                // SAFETY: detected above.
                assert_eq!(unsafe { parse16(&at, len) }, want, "{at:?}");
            }
        }
    }
}
