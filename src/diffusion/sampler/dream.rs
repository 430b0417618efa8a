//! Dream's sampler (`diffusion_generate` of the Dream authors). Timesteps are
//! `linspace(1, eps, steps + 1)` (computed in f32 as torch does); at step i, with t and s the
//! current and next timesteps:
//!
//! - `origin`: each masked position is revealed with probability `1 - s / t` (all at the last
//!   step), its token sampled from the processed distribution;
//! - `maskgit_plus`, `topk_margin`, `entropy`: every masked position gets a token and a
//!   confidence (probability of the token; top-1 minus top-2 probability; negative entropy),
//!   and `int(masks * (1 - s / t))` positions (all at the last step) are revealed: the most
//!   confident, or, with `alg_temp > 0`, drawn without replacement from
//!   `softmax(confidence / alg_temp)` (here by the equivalent Gumbel-top-k).
//!
//! Logits are processed as Dream does: divided by `temperature` (if > 0), then `top_p`, then
//! `top_k` filtering; tokens are sampled from the result at `temperature > 0`, else argmax.

use super::{argmax_by, softmax32, Proposals, Row, RowPolicy, Sampler, StepPlan};
use crate::diffusion::error::{DiffusionError, Result};
use crate::diffusion::rng::Rng;

/// Dream's remasking strategies.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DreamAlg {
    /// `origin`: each masked position is revealed with probability `1 - s / t`.
    Origin,
    /// `maskgit_plus`: confidence is the sampled token's probability.
    MaskgitPlus,
    /// `topk_margin`: confidence is the top-1 minus the top-2 probability.
    TopkMargin,
    /// `entropy`: confidence is the negative entropy of the position's distribution.
    Entropy,
}

impl std::str::FromStr for DreamAlg {
    type Err = DiffusionError;
    fn from_str(s: &str) -> Result<DreamAlg> {
        Ok(match s {
            "origin" => DreamAlg::Origin,
            "maskgit_plus" => DreamAlg::MaskgitPlus,
            "topk_margin" => DreamAlg::TopkMargin,
            "entropy" => DreamAlg::Entropy,
            _ => {
                return Err(DiffusionError::Sampler(format!(
                    "Dream: unknown alg {s:?} (origin, maskgit_plus, topk_margin, entropy)"
                )))
            }
        })
    }
}

/// Dream's sampler settings and schedule state.
#[derive(Clone, Debug)]
pub struct DreamSampler {
    /// Number of diffusion steps over the whole generation; positive.
    pub steps: usize,
    /// The last timestep, in (0, 1) (default 1e-3).
    pub eps: f64,
    /// Logits are divided by it and tokens sampled; 0 (the default) takes the argmax.
    pub temperature: f64,
    /// Nucleus filtering: keep the most probable tokens up to this cumulative probability, in
    /// (0, 1]; `None` keeps all.
    pub top_p: Option<f64>,
    /// Keep only the `k` most probable tokens; `None` keeps all.
    pub top_k: Option<usize>,
    /// How positions are chosen for revealing (default [`DreamAlg::Entropy`]).
    pub alg: DreamAlg,
    /// Temperature of the draw of positions by confidence; 0 (the default) takes the most
    /// confident. Unused by [`DreamAlg::Origin`].
    pub alg_temp: f64,
    step: usize,
    timesteps: Vec<f32>,
}

impl DreamSampler {
    /// Greedy `entropy` remasking with `eps = 1e-3`.
    pub fn new(steps: usize) -> DreamSampler {
        DreamSampler {
            steps,
            eps: 1e-3,
            temperature: 0.0,
            top_p: None,
            top_k: None,
            alg: DreamAlg::Entropy,
            alg_temp: 0.0,
            step: 0,
            timesteps: Vec::new(),
        }
    }

    /// Sets [`DreamSampler::alg`].
    pub fn alg(mut self, alg: DreamAlg) -> Self {
        self.alg = alg;
        self
    }

    /// Sets [`DreamSampler::temperature`].
    pub fn temperature(mut self, t: f64) -> Self {
        self.temperature = t;
        self
    }

    /// Sets [`DreamSampler::top_p`].
    pub fn top_p(mut self, p: f64) -> Self {
        self.top_p = Some(p);
        self
    }

    /// Sets [`DreamSampler::top_k`].
    pub fn top_k(mut self, k: usize) -> Self {
        self.top_k = Some(k);
        self
    }

    /// Sets [`DreamSampler::alg_temp`].
    pub fn alg_temp(mut self, t: f64) -> Self {
        self.alg_temp = t;
        self
    }

    /// Sets [`DreamSampler::eps`].
    pub fn eps(mut self, eps: f64) -> Self {
        self.eps = eps;
        self
    }

    /// `1 - s / t` at step i, in f32.
    fn ratio(&self, i: usize) -> f32 {
        1.0 - self.timesteps[i + 1] / self.timesteps[i]
    }
}

/// `torch.linspace(start, end, n)` in f32: the first half counted from `start`, the second
/// half back from `end`.
pub fn linspace_f32(start: f32, end: f32, n: usize) -> Vec<f32> {
    if n == 1 {
        return vec![start];
    }
    let step = (end - start) / (n - 1) as f32;
    let half = n / 2;
    (0..n)
        .map(|i| {
            if i < half {
                start + step * i as f32
            } else {
                end - step * (n - 1 - i) as f32
            }
        })
        .collect()
}

impl Sampler for DreamSampler {
    fn begin(&mut self, _prompt_len: usize, gen_len: usize) -> Result<()> {
        let err = |m: String| Err(DiffusionError::Sampler(m));
        if self.steps == 0 {
            return err("Dream: steps must be positive".into());
        }
        // Each step unmasks at least one position: more steps than positions would only add
        // empty steps (and timesteps allocated per step).
        if self.steps > gen_len.max(1) {
            return err(format!(
                "Dream: steps {} is more than gen_length {gen_len} (a step unmasks at least one \
                 position)",
                self.steps
            ));
        }
        if !(self.eps > 0.0 && self.eps < 1.0) {
            return err(format!("Dream: eps {} must be in (0, 1)", self.eps));
        }
        if !(self.temperature >= 0.0 && self.temperature.is_finite()) {
            return err(format!(
                "Dream: temperature {} must be >= 0",
                self.temperature
            ));
        }
        if let Some(p) = self.top_p {
            if !(p > 0.0 && p <= 1.0) {
                return err(format!("Dream: top_p {p} must be in (0, 1]"));
            }
        }
        if self.top_k == Some(0) {
            return err("Dream: top_k must be positive".into());
        }
        if !(self.alg_temp >= 0.0 && self.alg_temp.is_finite()) {
            return err(format!("Dream: alg_temp {} must be >= 0", self.alg_temp));
        }
        self.timesteps = linspace_f32(1.0, self.eps as f32, self.steps + 1);
        self.step = 0;
        Ok(())
    }

    fn plan(&mut self, ids: &[u32], mask_id: u32, rng: &mut Rng) -> Option<StepPlan> {
        while self.step < self.steps {
            let i = self.step;
            self.step += 1;
            let masked: Vec<usize> = (0..ids.len()).filter(|&p| ids[p] == mask_id).collect();
            if masked.is_empty() {
                return None;
            }
            let last = i + 1 == self.steps;
            let plan = if self.alg == DreamAlg::Origin {
                let p = if last { 1.0 } else { self.ratio(i) as f64 };
                let chosen: Vec<usize> = masked.into_iter().filter(|_| rng.uniform() < p).collect();
                StepPlan {
                    k: chosen.len(),
                    candidates: chosen,
                }
            } else {
                let k = if last {
                    masked.len()
                } else {
                    (masked.len() as f32 * self.ratio(i)) as usize
                };
                StepPlan {
                    k,
                    candidates: masked,
                }
            };
            if plan.k > 0 {
                return Some(plan);
            }
        }
        None
    }

    fn proposals(
        &self,
        plan: &StepPlan,
        rows: Vec<Vec<f32>>,
        banned: &[Vec<u32>],
        rng: &mut Rng,
    ) -> Proposals {
        let policy = DreamPolicy {
            temperature: self.temperature,
            top_p: self.top_p,
            top_k: self.top_k,
            alg: self.alg,
            alg_temp: self.alg_temp,
        };
        let keyed = self.alg != DreamAlg::Origin && self.alg_temp > 0.0;
        Proposals::new(
            &plan.candidates,
            rows,
            banned,
            Box::new(policy),
            rng,
            move |r| {
                if keyed {
                    r.gumbel()
                } else {
                    0.0
                }
            },
        )
    }
}

struct DreamPolicy {
    temperature: f64,
    top_p: Option<f64>,
    top_k: Option<usize>,
    alg: DreamAlg,
    alg_temp: f64,
}

/// Dream's `top_p_logits`: keep the smallest prefix of the sorted tokens whose cumulative
/// probability exceeds `p` (the first token always kept); the rest get `f32::MIN`.
pub fn top_p_filter(logits: &mut [f32], p: f64) {
    let n = logits.len();
    if n == 0 {
        return;
    }
    let probs = softmax32(logits);
    let desc = |a: &usize, b: &usize| logits[*b].total_cmp(&logits[*a]).then(a.cmp(b));
    // Sort only the head of the distribution: the top m tokens, m growing until the kept
    // prefix ends inside them (usually at once: the kept set is small).
    let mut m = n.min(64);
    let keep: Vec<usize> = loop {
        let mut idx: Vec<usize> = (0..n).collect();
        if m < n {
            idx.select_nth_unstable_by(m - 1, desc);
            idx.truncate(m);
        }
        idx.sort_by(desc);
        let mut cum = 0f32;
        let mut kept = 0;
        for (rank, &i) in idx.iter().enumerate() {
            // Shifted right by one: a token goes when the cumulative sum before it exceeds p.
            if rank > 0 && cum as f64 > p {
                break;
            }
            cum += probs[i];
            kept = rank + 1;
        }
        if kept < m || m == n {
            idx.truncate(kept);
            break idx;
        }
        m = n.min(m * 8);
    };
    let mut kept = vec![false; n];
    for i in keep {
        kept[i] = true;
    }
    for (l, k) in logits.iter_mut().zip(kept) {
        if !k {
            *l = f32::MIN;
        }
    }
}

/// Dream's `top_k_logits`: tokens below the k-th largest logit get `f32::MIN` (ties kept).
pub fn top_k_filter(logits: &mut [f32], k: usize) {
    let k = k.min(logits.len());
    if k == 0 {
        return;
    }
    let mut values = logits.to_vec();
    let (_, kth, _) = values.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
    let kth = *kth;
    for l in logits.iter_mut() {
        if *l < kth {
            *l = f32::MIN;
        }
    }
}

impl DreamPolicy {
    fn probs(&self, logits: &[f32]) -> Vec<f32> {
        let mut l: Vec<f32> = if self.temperature > 0.0 {
            logits
                .iter()
                .map(|&x| (x as f64 / self.temperature) as f32)
                .collect()
        } else {
            logits.to_vec()
        };
        if let Some(p) = self.top_p.filter(|&p| p < 1.0) {
            top_p_filter(&mut l, p);
        }
        if let Some(k) = self.top_k {
            top_k_filter(&mut l, k);
        }
        softmax32(&l)
    }
}

impl RowPolicy for DreamPolicy {
    fn choose(&self, row: &mut Row, rng: &mut Rng) -> Option<(u32, f64)> {
        if row.probs.is_empty() {
            row.probs = self.probs(&row.logits);
        }
        let probs = &row.probs;
        let allowed = |i: usize| !row.is_banned(i);
        let token = if self.temperature > 0.0 {
            let w: Vec<f64> = (0..probs.len())
                .map(|i| if allowed(i) { probs[i] as f64 } else { 0.0 })
                .collect();
            match rng.categorical(&w) {
                Some(t) => t,
                // Nothing left with mass: Dream falls back to the argmax.
                None => argmax_by(probs.len(), allowed, |i| probs[i] as f64)?,
            }
        } else {
            argmax_by(probs.len(), allowed, |i| probs[i] as f64)?
        };
        let conf = match self.alg {
            DreamAlg::Origin | DreamAlg::MaskgitPlus => probs[token] as f64,
            DreamAlg::TopkMargin => {
                let (mut a, mut b) = (0f32, 0f32);
                for (i, &p) in probs.iter().enumerate().filter(|&(i, _)| allowed(i)) {
                    let _ = i;
                    if p > a {
                        b = a;
                        a = p;
                    } else if p > b {
                        b = p;
                    }
                }
                (a - b) as f64
            }
            DreamAlg::Entropy => probs
                .iter()
                .enumerate()
                .filter(|&(i, _)| allowed(i))
                .map(|(_, &p)| p as f64 * (p as f64 + 1e-10).ln())
                .sum(),
        };
        let key = if self.alg != DreamAlg::Origin && self.alg_temp > 0.0 {
            conf / self.alg_temp + row.fixed
        } else {
            conf
        };
        Some((token as u32, key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_steps_than_positions_are_refused_before_the_timesteps() {
        let e = DreamSampler::new(usize::MAX).begin(3, 40).unwrap_err();
        assert!(e.to_string().contains("more than gen_length 40"), "{e}");
        assert!(DreamSampler::new(40).begin(3, 40).is_ok());
    }

    #[test]
    fn linspace_matches_torch_ends() {
        let t = linspace_f32(1.0, 1e-3, 5);
        assert_eq!(t.len(), 5);
        assert_eq!(t[0], 1.0);
        assert_eq!(t[4], 1e-3);
        assert!((t[2] - 0.5005).abs() < 1e-6);
    }

    #[test]
    fn top_p_keeps_the_first_token_over_the_threshold() {
        // probs ≈ [0.64, 0.24, 0.09, 0.03]
        let mut l = vec![3.0f32, 2.0, 1.0, 0.0];
        top_p_filter(&mut l, 0.7);
        assert_eq!(l, vec![3.0, 2.0, f32::MIN, f32::MIN]);
        let mut l = vec![0.0f32, 3.0, 2.0, 1.0];
        top_p_filter(&mut l, 0.5);
        assert_eq!(l, vec![f32::MIN, 3.0, f32::MIN, f32::MIN]);
    }

    #[test]
    fn top_p_on_a_long_row_matches_the_full_sort() {
        let mut r = Rng::new(5);
        for p in [0.1, 0.5, 0.9, 0.999] {
            let row: Vec<f32> = (0..5000).map(|_| (r.uniform() * 12.0) as f32).collect();
            let mut fast = row.clone();
            top_p_filter(&mut fast, p);
            // Reference: the full sort.
            let mut order: Vec<usize> = (0..row.len()).collect();
            order.sort_by(|&a, &b| row[b].total_cmp(&row[a]));
            let probs = softmax32(&row);
            let mut want = vec![f32::MIN; row.len()];
            let mut cum = 0f32;
            for (rank, &i) in order.iter().enumerate() {
                if rank > 0 && cum as f64 > p {
                    break;
                }
                cum += probs[i];
                want[i] = row[i];
            }
            assert_eq!(fast, want, "p = {p}");
        }
    }

    #[test]
    fn top_k_keeps_ties() {
        let mut l = vec![1.0f32, 3.0, 3.0, 2.0];
        top_k_filter(&mut l, 2);
        assert_eq!(l, vec![f32::MIN, 3.0, 3.0, f32::MIN]);
    }
}
