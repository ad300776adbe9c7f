//! A small unsigned big integer in base 10^9, enough for exact quantity arithmetic: parsing
//! digits, scaling by powers of two and ten, adding, subtracting, comparing, rounding a
//! division by a power of ten up, and printing. Every operation is linear in the number of
//! limbs; growth by a power of ten is refused past [`super::MAX_DIGITS`] digits.

use std::cmp::Ordering;

const BASE: u64 = 1_000_000_000;
const POW10: [u32; 10] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
];

/// A non-negative integer, little-endian limbs of nine decimal digits, without leading zero
/// limbs (zero has no limbs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Mag(Vec<u32>);

impl Mag {
    pub(crate) fn zero() -> Mag {
        Mag(Vec::new())
    }

    pub(crate) fn from_u64(mut v: u64) -> Mag {
        let mut limbs = Vec::new();
        while v > 0 {
            limbs.push((v % BASE) as u32);
            v /= BASE;
        }
        Mag(limbs)
    }

    /// From ASCII decimal digits (the caller guarantees they are digits).
    pub(crate) fn from_digits(d: &[u8]) -> Mag {
        let mut limbs = Vec::with_capacity(d.len() / 9 + 1);
        let mut end = d.len();
        while end > 0 {
            let start = end.saturating_sub(9);
            let mut limb = 0u32;
            for &c in &d[start..end] {
                limb = limb * 10 + u32::from(c - b'0');
            }
            limbs.push(limb);
            end = start;
        }
        let mut m = Mag(limbs);
        m.trim();
        m
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// The number of decimal digits (0 for zero).
    pub(crate) fn digits(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(&top) => {
                let mut d = 1;
                while d < 10 && top >= POW10[d] {
                    d += 1;
                }
                (self.0.len() as u64 - 1) * 9 + d as u64
            }
        }
    }

    pub(crate) fn cmp_mag(&self, o: &Mag) -> Ordering {
        self.0
            .len()
            .cmp(&o.0.len())
            .then_with(|| self.0.iter().rev().cmp(o.0.iter().rev()))
    }

    pub(crate) fn add(&self, o: &Mag) -> Mag {
        let n = self.0.len().max(o.0.len());
        let mut out = Vec::with_capacity(n + 1);
        let mut carry = 0u64;
        for i in 0..n {
            let s = u64::from(*self.0.get(i).unwrap_or(&0))
                + u64::from(*o.0.get(i).unwrap_or(&0))
                + carry;
            out.push((s % BASE) as u32);
            carry = s / BASE;
        }
        if carry > 0 {
            out.push(carry as u32);
        }
        Mag(out)
    }

    /// `self - o`, requiring `self >= o`.
    pub(crate) fn sub(&self, o: &Mag) -> Mag {
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let mut d = i64::from(self.0[i]) - i64::from(*o.0.get(i).unwrap_or(&0)) - borrow;
            if d < 0 {
                d += BASE as i64;
                borrow = 1;
            } else {
                borrow = 0;
            }
            out.push(d as u32);
        }
        let mut m = Mag(out);
        m.trim();
        m
    }

    fn mul_small(&mut self, f: u32) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let p = u64::from(*limb) * u64::from(f) + carry;
            *limb = (p % BASE) as u32;
            carry = p / BASE;
        }
        while carry > 0 {
            self.0.push((carry % BASE) as u32);
            carry /= BASE;
        }
        self.trim();
    }

    /// `self × 2^k`.
    pub(crate) fn mul_pow2(&mut self, mut k: u32) {
        while k > 0 {
            let step = k.min(29);
            self.mul_small(1 << step);
            k -= step;
        }
    }

    /// `self × 10^k`, or `None` when the result would have more than `max_digits` digits.
    pub(crate) fn mul_pow10(&self, k: u64, max_digits: u64) -> Option<Mag> {
        if self.is_zero() {
            return Some(Mag::zero());
        }
        if self.digits().saturating_add(k) > max_digits {
            return None;
        }
        let whole = (k / 9) as usize;
        let mut limbs = Vec::with_capacity(self.0.len() + whole + 1);
        limbs.resize(whole, 0);
        limbs.extend_from_slice(&self.0);
        let mut m = Mag(limbs);
        m.mul_small(POW10[(k % 9) as usize]);
        Some(m)
    }

    /// `ceil(self / 10^k)`.
    pub(crate) fn div_pow10_ceil(&self, k: u64) -> Mag {
        if self.is_zero() {
            return Mag::zero();
        }
        if k >= self.digits() {
            return Mag::from_u64(1);
        }
        let whole = (k / 9) as usize;
        let mut inexact = self.0[..whole].iter().any(|&l| l != 0);
        let mut limbs: Vec<u32> = self.0[whole..].to_vec();
        let d = u64::from(POW10[(k % 9) as usize]);
        if d > 1 {
            let mut rem = 0u64;
            for limb in limbs.iter_mut().rev() {
                let cur = rem * BASE + u64::from(*limb);
                *limb = (cur / d) as u32;
                rem = cur % d;
            }
            inexact |= rem != 0;
        }
        let mut m = Mag(limbs);
        m.trim();
        if inexact {
            m = m.add(&Mag::from_u64(1));
        }
        m
    }

    /// The value if it fits a `u64`.
    #[cfg(test)]
    pub(crate) fn to_u64(&self) -> Option<u64> {
        let mut v: u64 = 0;
        for &l in self.0.iter().rev() {
            v = v.checked_mul(BASE)?.checked_add(u64::from(l))?;
        }
        Some(v)
    }

    /// Decimal digits.
    pub(crate) fn to_decimal(&self) -> String {
        let mut out = String::with_capacity(self.0.len() * 9 + 1);
        match self.0.split_last() {
            None => out.push('0'),
            Some((top, rest)) => {
                out.push_str(&top.to_string());
                for l in rest.iter().rev() {
                    out.push_str(&format!("{l:09}"));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic() {
        let a = Mag::from_digits(b"123456789012345678901234567890");
        assert_eq!(a.to_decimal(), "123456789012345678901234567890");
        assert_eq!(a.digits(), 30);
        let b = a.mul_pow10(11, 1000).unwrap();
        assert_eq!(b.to_decimal(), "12345678901234567890123456789000000000000");
        assert_eq!(b.div_pow10_ceil(11), a);
        assert_eq!(
            a.div_pow10_ceil(1).to_decimal(),
            "12345678901234567890123456789"
        );
        assert_eq!(Mag::from_u64(1001).div_pow10_ceil(3).to_decimal(), "2");
        assert_eq!(Mag::from_u64(5).div_pow10_ceil(40).to_decimal(), "1");
        let mut c = Mag::from_u64(3);
        c.mul_pow2(60);
        assert_eq!(c.to_decimal(), (3u128 << 60).to_string());
        assert_eq!(a.add(&a).sub(&a), a);
        assert_eq!(Mag::from_u64(u64::MAX).to_u64(), Some(u64::MAX));
        assert!(Mag::from_digits(b"000").is_zero());
        assert_eq!(
            Mag::from_u64(999_999_999).add(&Mag::from_u64(1)).digits(),
            10
        );
    }
}
