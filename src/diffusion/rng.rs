//! A small seeded generator (xoshiro256**, seeded through splitmix64) so that every sampler is
//! reproducible from its seed on every platform and library version.

/// A seeded pseudo-random generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The generator for `seed`; equal seeds give equal sequences.
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }

    /// The next 64 uniformly distributed bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A uniform number in the open interval (0, 1): never 0, so `-ln u` is finite.
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A standard Gumbel variate `-ln(-ln u)`.
    pub fn gumbel(&mut self) -> f64 {
        -(-self.uniform().ln()).ln()
    }

    /// An index drawn from unnormalized non-negative weights; `None` if all are zero.
    pub fn categorical(&mut self, weights: &[f64]) -> Option<usize> {
        let total: f64 = weights.iter().filter(|w| w.is_finite()).sum();
        if total <= 0.0 {
            return None;
        }
        let mut r = self.uniform() * total;
        let mut last = None;
        for (i, &w) in weights.iter().enumerate() {
            if w > 0.0 && w.is_finite() {
                last = Some(i);
                if r < w {
                    return Some(i);
                }
                r -= w;
            }
        }
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_and_in_range() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for _ in 0..1000 {
            let u = a.uniform();
            assert_eq!(u, b.uniform());
            assert!(u > 0.0 && u < 1.0);
        }
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }

    #[test]
    fn categorical_follows_weights() {
        let mut r = Rng::new(3);
        let mut counts = [0usize; 3];
        for _ in 0..30_000 {
            counts[r.categorical(&[1.0, 0.0, 3.0]).unwrap()] += 1;
        }
        assert_eq!(counts[1], 0);
        let ratio = counts[2] as f64 / counts[0] as f64;
        assert!((ratio - 3.0).abs() < 0.2, "{ratio}");
        assert_eq!(r.categorical(&[0.0, 0.0]), None);
    }
}
