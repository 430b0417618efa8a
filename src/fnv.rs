//! FNV-1a (64 bits): a small, stable hash of bytes, for what must come out the same on every
//! build and platform (a corpus's fingerprint, an evaluation item's seed) — unlike std's
//! `DefaultHasher`, whose output may change between Rust releases. Not a defence against
//! anyone making two inputs collide on purpose, which nothing here needs.

/// The running hash.
pub(crate) struct Fnv1a(u64);

impl Fnv1a {
    pub(crate) fn new() -> Fnv1a {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    pub(crate) fn finish(&self) -> u64 {
        self.0
    }
}
