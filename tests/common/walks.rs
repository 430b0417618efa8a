//! Walks of one-position changes from a canvas, as a sampler makes them: mask a filled
//! position, or fill a masked one with a token taken from elsewhere in the canvas (which may
//! well corrupt it). Shared by `src/tests/workload.rs` and `benches/check.rs`.

// The including module brings `Canvas` and `Cell` into scope (the lib's tests and the
// benchmarks reach them by different paths).
use super::{Canvas, Cell};

/// A small deterministic generator (xorshift), so walks reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// One step: `canvas` with one position (before its first EOS) changed.
pub fn change_one_position(canvas: &Canvas, rng: &mut Rng) -> Canvas {
    let mut canvas = canvas.clone();
    let end = canvas
        .cells
        .iter()
        .position(|c| *c == Cell::Eos)
        .unwrap_or(canvas.cells.len());
    let tokens: Vec<Vec<u8>> = canvas.cells[..end]
        .iter()
        .filter_map(|c| match c {
            Cell::Token(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    if end > 0 {
        let i = rng.below(end);
        canvas.cells[i] = match &canvas.cells[i] {
            Cell::Mask if !tokens.is_empty() => {
                Cell::Token(tokens[rng.below(tokens.len())].clone())
            }
            _ => Cell::Mask,
        };
    }
    canvas
}
