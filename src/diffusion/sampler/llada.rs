//! LLaDA's sampler (`generate` of the LLaDA authors): the generation is cut into semi-
//! autoregressive blocks of `block_length`; each block gets `steps / num_blocks` steps, and the
//! masks of the block are split evenly over them, the remainder going to the first steps. In a
//! step, each masked position up to the end of the current block takes the argmax of its
//! logits with Gumbel noise (`exp(logits) / (-ln u)^temperature`, in f64; plain argmax at
//! temperature 0), and the `k` positions of highest confidence are filled: the softmax
//! probability of the chosen token (`low_confidence`) or a uniform random number (`random`).

use super::{argmax_by, Proposals, Row, RowPolicy, Sampler, StepPlan};
use crate::diffusion::error::{DiffusionError, Result};
use crate::diffusion::rng::Rng;

/// How LLaDA ranks the positions of a step.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Remasking {
    /// By the probability of the chosen token.
    LowConfidence,
    /// By a uniform random number.
    Random,
}

/// LLaDA's sampler settings and schedule state.
#[derive(Clone, Debug)]
pub struct LLaDASampler {
    /// Number of steps over the whole generation; a positive multiple of the number of
    /// blocks.
    pub steps: usize,
    /// Positions per semi-autoregressive block; must divide the generation length.
    pub block_length: usize,
    /// Gumbel noise temperature of the token choice; 0 (the default) takes the argmax.
    pub temperature: f64,
    /// Classifier-free guidance scale; 0 (the default) runs no guidance pass.
    pub cfg_scale: f64,
    /// How a step's positions are ranked (default [`Remasking::LowConfidence`]).
    pub remasking: Remasking,
    // Schedule state.
    prompt_len: usize,
    gen_len: usize,
    block: usize,
    step: usize,
    schedule: Vec<usize>,
}

impl LLaDASampler {
    /// Greedy low-confidence remasking without guidance, the authors' defaults.
    pub fn new(steps: usize, block_length: usize) -> LLaDASampler {
        LLaDASampler {
            steps,
            block_length,
            temperature: 0.0,
            cfg_scale: 0.0,
            remasking: Remasking::LowConfidence,
            prompt_len: 0,
            gen_len: 0,
            block: 0,
            step: 0,
            schedule: Vec::new(),
        }
    }

    /// Sets [`LLaDASampler::temperature`].
    pub fn temperature(mut self, t: f64) -> Self {
        self.temperature = t;
        self
    }

    /// Sets [`LLaDASampler::cfg_scale`].
    pub fn cfg_scale(mut self, s: f64) -> Self {
        self.cfg_scale = s;
        self
    }

    /// Sets [`LLaDASampler::remasking`].
    pub fn remasking(mut self, r: Remasking) -> Self {
        self.remasking = r;
        self
    }

    fn num_blocks(&self) -> usize {
        self.gen_len / self.block_length
    }

    fn steps_per_block(&self) -> usize {
        self.steps / self.num_blocks()
    }
}

/// `mask_count` tokens over `steps` steps: `mask_count / steps` each, one more for the first
/// `mask_count % steps` steps (LLaDA's `get_num_transfer_tokens`).
pub fn num_transfer_tokens(mask_count: usize, steps: usize) -> Vec<usize> {
    if steps == 0 {
        return Vec::new();
    }
    let (base, rem) = (mask_count / steps, mask_count % steps);
    (0..steps).map(|i| base + usize::from(i < rem)).collect()
}

impl Sampler for LLaDASampler {
    fn begin(&mut self, prompt_len: usize, gen_len: usize) -> Result<()> {
        let err = |m: String| Err(DiffusionError::Sampler(m));
        if self.block_length == 0 || !gen_len.is_multiple_of(self.block_length) {
            return err(format!(
                "LLaDA: gen_length {gen_len} is not a multiple of block_length {}",
                self.block_length
            ));
        }
        let blocks = gen_len / self.block_length;
        if self.steps == 0 || !self.steps.is_multiple_of(blocks) {
            return err(format!(
                "LLaDA: steps {} is not a positive multiple of the number of blocks {blocks} \
                 (gen_length {gen_len} / block_length {})",
                self.steps, self.block_length
            ));
        }
        // Each step unmasks at least one position: more steps than positions would only add
        // empty steps (and a schedule allocated per step).
        if self.steps > gen_len {
            return err(format!(
                "LLaDA: steps {} is more than gen_length {gen_len} (a step unmasks at least one \
                 position)",
                self.steps
            ));
        }
        if !(self.temperature >= 0.0 && self.temperature.is_finite()) {
            return err(format!(
                "LLaDA: temperature {} must be >= 0",
                self.temperature
            ));
        }
        if !(self.cfg_scale >= 0.0 && self.cfg_scale.is_finite()) {
            return err(format!("LLaDA: cfg_scale {} must be >= 0", self.cfg_scale));
        }
        self.prompt_len = prompt_len;
        self.gen_len = gen_len;
        self.block = 0;
        self.step = 0;
        self.schedule.clear();
        Ok(())
    }

    fn plan(&mut self, ids: &[u32], mask_id: u32, _rng: &mut Rng) -> Option<StepPlan> {
        loop {
            if self.gen_len == 0 || self.block >= self.num_blocks() {
                return None;
            }
            let start = self.prompt_len + self.block * self.block_length;
            let end = start + self.block_length;
            if self.step == 0 {
                let masks = ids[start..end].iter().filter(|&&t| t == mask_id).count();
                self.schedule = num_transfer_tokens(masks, self.steps_per_block());
            }
            if self.step >= self.steps_per_block() {
                self.block += 1;
                self.step = 0;
                continue;
            }
            let k = self.schedule[self.step];
            self.step += 1;
            let candidates: Vec<usize> = (0..end).filter(|&i| ids[i] == mask_id).collect();
            if k > 0 && !candidates.is_empty() {
                return Some(StepPlan { candidates, k });
            }
        }
    }

    fn proposals(
        &self,
        plan: &StepPlan,
        rows: Vec<Vec<f32>>,
        banned: &[Vec<u32>],
        rng: &mut Rng,
    ) -> Proposals {
        let policy = LLaDAPolicy {
            temperature: self.temperature,
            remasking: self.remasking,
        };
        Proposals::new(&plan.candidates, rows, banned, Box::new(policy), rng, |r| {
            r.uniform()
        })
    }

    fn cfg_scale(&self) -> f64 {
        self.cfg_scale
    }
}

struct LLaDAPolicy {
    temperature: f64,
    remasking: Remasking,
}

/// `exp(l) / (-ln u)^t` for every token in f64, `u` drawn from the row's seed in token order
/// (LLaDA's `add_gumbel_noise`); the same noise on every call for the row.
pub(crate) fn gumbel_scores(logits: &[f32], temperature: f64, seed: u64) -> Vec<f64> {
    let mut r = Rng::new(seed);
    logits
        .iter()
        .map(|&l| (l as f64).exp() / (-r.uniform().ln()).powf(temperature))
        .collect()
}

impl RowPolicy for LLaDAPolicy {
    fn choose(&self, row: &mut Row, _rng: &mut Rng) -> Option<(u32, f64)> {
        let n = row.logits.len();
        let token = if self.temperature == 0.0 {
            argmax_by(n, |i| !row.is_banned(i), |i| row.logits[i] as f64)?
        } else {
            let scores = gumbel_scores(&row.logits, self.temperature, row.seed);
            argmax_by(n, |i| !row.is_banned(i), |i| scores[i])?
        };
        let key = match self.remasking {
            Remasking::LowConfidence => softmax_prob(&row.logits, token),
            Remasking::Random => row.fixed,
        };
        Some((token as u32, key))
    }
}

/// The softmax probability of `token` in f64.
fn softmax_prob(logits: &[f32], token: usize) -> f64 {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let sum: f64 = logits.iter().map(|&l| (l as f64 - max).exp()).sum();
    (logits[token] as f64 - max).exp() / sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_counts_split_evenly_remainder_first() {
        assert_eq!(num_transfer_tokens(10, 4), vec![3, 3, 2, 2]);
        assert_eq!(num_transfer_tokens(8, 4), vec![2, 2, 2, 2]);
        assert_eq!(num_transfer_tokens(3, 5), vec![1, 1, 1, 0, 0]);
    }

    #[test]
    fn more_steps_than_positions_are_refused_before_any_schedule() {
        // u64::MAX is a multiple of 5 blocks: only the step count itself can refuse it.
        let e = LLaDASampler::new(usize::MAX, 8).begin(3, 40).unwrap_err();
        assert!(e.to_string().contains("more than gen_length 40"), "{e}");
        assert!(LLaDASampler::new(40, 8).begin(3, 40).is_ok());
    }

    #[test]
    fn gumbel_form_at_temperature_one_is_exp_over_exponential() {
        let s = gumbel_scores(&[0.0, 1.0], 1.0, 9);
        let mut r = Rng::new(9);
        let (u0, u1) = (r.uniform(), r.uniform());
        assert!((s[0] - 1.0 / -u0.ln()).abs() < 1e-12);
        assert!((s[1] - 1f64.exp() / -u1.ln()).abs() < 1e-12);
    }
}
