//! Samplers as the model authors define them (LLaDA's `generate`, Dream's `diffusion_generate`),
//! split into the two questions a constrained loop must ask separately:
//!
//! - [`Sampler::plan`]: before a forward pass, which masked positions may be filled in this step
//!   and how many of them (the authors' schedules: semi-autoregressive blocks with tokens split
//!   evenly over steps for LLaDA; the `linspace(1, eps, steps + 1)` timesteps for Dream);
//! - [`Sampler::proposals`]: after it, a [`Proposals`] queue that yields (position, token) pairs
//!   best first, in the sampler's own order (its confidence), and proposes the next best token
//!   at a position when a pair is rejected (the token's probability set to 0 there).
//!
//! Unconstrained sampling takes the first `k` proposals, which is exactly the authors' top-k
//! transfer. All randomness comes from a seeded [`Rng`]. The mask token is never proposed.

mod dream;
mod llada;

pub use dream::{DreamAlg, DreamSampler};
pub use llada::{LLaDASampler, Remasking};

use std::fmt;

use hashbrown::HashSet;

use crate::vocab::TokenMask;

use super::error::Result;
use super::rng::Rng;

/// What one step may do: fill up to `k` of the `candidates` (absolute positions, masked).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepPlan {
    /// Masked positions the step may fill, as indices into the whole sequence (prompt
    /// included), ascending.
    pub candidates: Vec<usize>,
    /// How many tokens the step places: at most `candidates.len()`.
    pub k: usize,
}

/// A sampler's schedule and its choice of tokens. See the [module docs](self).
pub trait Sampler {
    /// Checks the settings for `gen_len` tokens after a prompt of `prompt_len` and resets the
    /// schedule.
    fn begin(&mut self, prompt_len: usize, gen_len: usize) -> Result<()>;
    /// The next step on the current ids, or `None` when the schedule is over. Steps that would
    /// fill nothing are skipped (they would not change the ids).
    fn plan(&mut self, ids: &[u32], mask_id: u32, rng: &mut Rng) -> Option<StepPlan>;
    /// The proposal queue for a planned step from the logits rows of its candidates (in the
    /// plan's order). `banned[i]` are tokens never proposed at candidate i (the mask token;
    /// pairs a constraint rejected in earlier steps).
    fn proposals(
        &self,
        plan: &StepPlan,
        rows: Vec<Vec<f32>>,
        banned: &[Vec<u32>],
        rng: &mut Rng,
    ) -> Proposals;
    /// Classifier-free guidance scale (0: none). With a scale, the model runs a second pass
    /// with the prompt masked and the logits become `un + (scale + 1) * (cond - un)`.
    fn cfg_scale(&self) -> f64 {
        0.0
    }
}

/// How a row turns its logits into a token and a ranking key, given the banned tokens.
pub(crate) trait RowPolicy {
    /// The token proposed at the row (none if every token is banned) and its key (higher is
    /// proposed first).
    fn choose(&self, row: &mut Row, rng: &mut Rng) -> Option<(u32, f64)>;
}

/// One candidate position of a step.
#[derive(Clone, Debug)]
pub(crate) struct Row {
    pub position: usize,
    pub logits: Vec<f32>,
    /// Per-row values fixed for the step (e.g. a seed for Gumbel noise, a random key).
    pub seed: u64,
    pub fixed: f64,
    /// Probabilities the policy derived from the logits, cached after the first choice.
    pub probs: Vec<f32>,
    pub banned: HashSet<u32>,
    /// The tokens a grammar allows here (all if `None`): a valid-token mask.
    pub allowed: Option<TokenMask>,
    pub current: Option<(u32, f64)>,
    pub done: bool,
}

impl Row {
    pub fn is_banned(&self, token: usize) -> bool {
        self.banned.contains(&(token as u32))
            || self
                .allowed
                .as_ref()
                .is_some_and(|m| !m.contains(token as u32))
    }
}

/// The (position, token) pairs of one step, best first. See the [module docs](self).
///
/// `Debug` shows each position's current proposal, not the logits.
pub struct Proposals {
    rows: Vec<Row>,
    policy: Box<dyn RowPolicy>,
    rng: Rng,
}

impl Proposals {
    pub(crate) fn new(
        positions: &[usize],
        rows: Vec<Vec<f32>>,
        banned: &[Vec<u32>],
        policy: Box<dyn RowPolicy>,
        rng: &mut Rng,
        fixed: impl Fn(&mut Rng) -> f64,
    ) -> Proposals {
        let mut local = Rng::new(rng.next_u64());
        let mut rows: Vec<Row> = positions
            .iter()
            .zip(rows)
            .enumerate()
            .map(|(i, (&position, logits))| Row {
                position,
                logits,
                seed: local.next_u64(),
                fixed: fixed(&mut local),
                probs: Vec::new(),
                banned: banned.get(i).into_iter().flatten().copied().collect(),
                allowed: None,
                current: None,
                done: false,
            })
            .collect();
        for row in &mut rows {
            row.current = policy.choose(row, &mut local);
            row.done = row.current.is_none();
        }
        Proposals {
            rows,
            policy,
            rng: local,
        }
    }

    /// The best pair not yet accepted or rejected: the highest key, the leftmost on ties.
    pub fn next_best(&self) -> Option<(usize, u32)> {
        let mut best: Option<(&Row, f64)> = None;
        for r in self.rows.iter().filter(|r| !r.done) {
            if let Some((_, key)) = r.current {
                if best.is_none_or(|(_, k)| key > k) {
                    best = Some((r, key));
                }
            }
        }
        best.map(|(r, _)| (r.position, r.current.expect("chosen").0))
    }

    /// The first `k` proposals (the unconstrained transfer), positions distinct.
    pub fn top_k(&mut self, k: usize) -> Vec<(usize, u32)> {
        let mut out = Vec::new();
        while out.len() < k {
            let Some((p, t)) = self.next_best() else {
                break;
            };
            self.accept(p);
            out.push((p, t));
        }
        out
    }

    /// The pair at `position` was placed: the position leaves the queue.
    pub fn accept(&mut self, position: usize) {
        if let Some(r) = self.rows.iter_mut().find(|r| r.position == position) {
            r.done = true;
        }
    }

    /// `token` may not go to `position`: its probability there becomes 0 and the position
    /// proposes its next best token.
    pub fn reject(&mut self, position: usize, token: u32) {
        if let Some(r) = self.rows.iter_mut().find(|r| r.position == position) {
            r.banned.insert(token);
            r.current = self.policy.choose(r, &mut self.rng);
            r.done = r.current.is_none();
        }
    }

    /// Only the tokens in `allowed` may go to `position` from now on (a grammar's valid-token
    /// mask): the position proposes its best allowed token, or leaves the queue if there is
    /// none. Its logits are left as they are; a sampler that wants the constrained
    /// distribution masks them before the proposals are made.
    pub fn restrict(&mut self, position: usize, allowed: TokenMask) {
        if let Some(r) = self.rows.iter_mut().find(|r| r.position == position) {
            r.allowed = Some(allowed);
            r.current = self.policy.choose(r, &mut self.rng);
            r.done = r.current.is_none();
        }
    }

    /// The token `position` proposes now (`None` once it left the queue).
    pub fn current(&self, position: usize) -> Option<u32> {
        let r = self.rows.iter().find(|r| r.position == position)?;
        r.current.filter(|_| !r.done).map(|(t, _)| t)
    }

    /// Whether `position` has a mask ([`Proposals::restrict`]).
    pub fn is_restricted(&self, position: usize) -> bool {
        self.rows
            .iter()
            .any(|r| r.position == position && r.allowed.is_some())
    }

    /// Number of positions still in the queue.
    pub fn open(&self) -> usize {
        self.rows.iter().filter(|r| !r.done).count()
    }
}

impl fmt::Debug for Proposals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let current: Vec<(usize, Option<u32>)> = self
            .rows
            .iter()
            .map(|r| (r.position, r.current.filter(|_| !r.done).map(|(t, _)| t)))
            .collect();
        f.debug_struct("Proposals")
            .field("current", &current)
            .field("open", &self.open())
            .finish_non_exhaustive()
    }
}

/// `softmax` of a row in f32 (max-subtracted, as torch computes it).
pub(crate) fn softmax32(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exps: Vec<f32> = logits.iter().map(|&l| (l - max).exp()).collect();
    let sum: f32 = exps.iter().sum();
    exps.into_iter().map(|e| e / sum).collect()
}

/// The index of the largest value among indices `allowed`, the first on ties.
pub(crate) fn argmax_by(
    n: usize,
    allowed: impl Fn(usize) -> bool,
    value: impl Fn(usize) -> f64,
) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for i in (0..n).filter(|&i| allowed(i)) {
        let v = value(i);
        if best.is_none_or(|(_, b)| v > b) {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i)
}
