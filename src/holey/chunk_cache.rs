//! What the lexer keeps between checks by chunk text: a map from (hole set, a code for what
//! follows the chunk, the chunk's bytes) to what was computed there.
//!
//! A sampler changes one position at a time, so most chunks of a canvas were seen in the
//! previous check, and keeping their results is what makes a re-check cheap. A long-lived
//! checker sees an unbounded stream of distinct chunks, so the map is capped twice: by entries
//! and by the bytes its keys hold (one long chunk can weigh as much as thousands of short ones).
//! Past either cap it is emptied whole: the next checks rebuild what they use, and the cost is
//! one slower check, not a latch.

use hashbrown::HashMap;

use super::config::HoleSetId;

/// A borrowed form of the key (the chunk's bytes as a slice), so a lookup copies nothing.
#[derive(Hash)]
pub(super) struct ChunkKey<'a>(pub HoleSetId, pub u8, pub &'a [u8]);

impl hashbrown::Equivalent<(HoleSetId, u8, Vec<u8>)> for ChunkKey<'_> {
    fn equivalent(&self, key: &(HoleSetId, u8, Vec<u8>)) -> bool {
        self.0 == key.0 && self.1 == key.1 && self.2 == &key.2[..]
    }
}

/// A map by chunk text with at most `max_entries` entries and `max_key_bytes` bytes of keys.
pub(super) struct ChunkCache<V> {
    map: HashMap<(HoleSetId, u8, Vec<u8>), V>,
    key_bytes: usize,
    max_entries: usize,
    max_key_bytes: usize,
}

impl<V> ChunkCache<V> {
    pub fn new(max_entries: usize, max_key_bytes: usize) -> Self {
        ChunkCache {
            map: HashMap::new(),
            key_bytes: 0,
            max_entries,
            max_key_bytes,
        }
    }

    pub fn get(&self, h: HoleSetId, last: u8, chunk: &[u8]) -> Option<&V> {
        self.map.get(&ChunkKey(h, last, chunk))
    }

    pub fn insert(&mut self, h: HoleSetId, last: u8, chunk: Vec<u8>, value: V) {
        if self.map.len() >= self.max_entries || self.key_bytes + chunk.len() > self.max_key_bytes {
            self.clear();
        }
        if chunk.len() > self.max_key_bytes {
            return;
        }
        let len = chunk.len();
        if self.map.insert((h, last, chunk), value).is_none() {
            self.key_bytes += len;
        }
    }

    pub fn clear(&mut self) {
        self.map = HashMap::new();
        self.key_bytes = 0;
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Bytes held by the keys' chunk texts.
    pub fn key_bytes(&self) -> usize {
        self.key_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_and_key_bytes_stay_under_their_caps() {
        let mut c = ChunkCache::new(4, 10);
        for i in 0..100u8 {
            c.insert(0, 0, vec![i; (i % 7) as usize], i);
            assert!(
                c.len() <= 4 && c.key_bytes() <= 10,
                "{} {}",
                c.len(),
                c.key_bytes()
            );
            assert_eq!(c.get(0, 0, &vec![i; (i % 7) as usize]), Some(&i));
        }
        // A chunk longer than the byte cap is not kept (and does not grow the cache).
        c.insert(1, 0, vec![0; 11], 0);
        assert_eq!(c.get(1, 0, &[0; 11]), None);
        assert_eq!((c.len(), c.key_bytes()), (0, 0));
    }
}
