//! AdamW (decoupled weight decay) whose moments can be saved and restored, so that a resumed
//! run continues exactly where it stopped; candle's own optimizer keeps its state private.
//! Weight decay applies to matrices only, not to norm scales.

use std::collections::HashMap;
use std::path::Path;

use candle_core::backprop::GradStore;
use candle_core::{DType, Device, Tensor, Var};

use super::Result;

/// Hyper-parameters.
#[derive(Clone, Copy, Debug)]
pub struct AdamWParams {
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub weight_decay: f64,
}

impl Default for AdamWParams {
    fn default() -> Self {
        AdamWParams {
            beta1: 0.9,
            beta2: 0.95,
            eps: 1e-8,
            weight_decay: 0.1,
        }
    }
}

struct Slot {
    name: String,
    var: Var,
    m: Var,
    v: Var,
}

/// The optimizer over named variables.
pub struct AdamW {
    slots: Vec<Slot>,
    params: AdamWParams,
    /// Updates made so far (for bias correction).
    pub t: u64,
}

impl AdamW {
    /// An optimizer over `vars` (sorted by name, so saved state lines up on reload).
    pub fn new(vars: HashMap<String, Var>, params: AdamWParams) -> Result<AdamW> {
        let mut named: Vec<(String, Var)> = vars.into_iter().collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let mut slots = Vec::with_capacity(named.len());
        for (name, var) in named {
            let zeros = || Var::zeros(var.shape(), DType::F32, var.device());
            slots.push(Slot {
                m: zeros()?,
                v: zeros()?,
                name,
                var,
            });
        }
        Ok(AdamW {
            slots,
            params,
            t: 0,
        })
    }

    /// The global L2 norm of the gradients.
    pub fn grad_norm(&self, grads: &GradStore) -> Result<f64> {
        let mut total = 0f64;
        for s in &self.slots {
            if let Some(g) = grads.get(s.var.as_tensor()) {
                total += g.sqr()?.sum_all()?.to_scalar::<f32>()? as f64;
            }
        }
        Ok(total.sqrt())
    }

    /// One update at learning rate `lr`, with gradients scaled by `scale` (for clipping).
    pub fn step(&mut self, grads: &GradStore, lr: f64, scale: f64) -> Result<()> {
        self.t += 1;
        let p = self.params;
        let c1 = 1.0 - p.beta1.powi(self.t as i32);
        let c2 = 1.0 - p.beta2.powi(self.t as i32);
        for s in &self.slots {
            let Some(g) = grads.get(s.var.as_tensor()) else {
                continue;
            };
            let g = (g * scale)?;
            let m = ((s.m.as_tensor() * p.beta1)? + (&g * (1.0 - p.beta1))?)?;
            let v = ((s.v.as_tensor() * p.beta2)? + (g.sqr()? * (1.0 - p.beta2))?)?;
            let update = ((&m / c1)? / ((&v / c2)?.sqrt()? + p.eps)?)?;
            let decay = if s.var.rank() >= 2 {
                1.0 - lr * p.weight_decay
            } else {
                1.0
            };
            let next = ((s.var.as_tensor() * decay)? - (update * lr)?)?;
            s.var.set(&next)?;
            s.m.set(&m)?;
            s.v.set(&v)?;
        }
        Ok(())
    }

    /// Saves the moments as safetensors (`m.NAME`, `v.NAME`).
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut map: HashMap<String, Tensor> = HashMap::new();
        for s in &self.slots {
            map.insert(format!("m.{}", s.name), s.m.as_tensor().clone());
            map.insert(format!("v.{}", s.name), s.v.as_tensor().clone());
        }
        candle_core::safetensors::save(&map, path)?;
        Ok(())
    }

    /// Restores moments saved by [`AdamW::save`]; every variable must be present.
    pub fn load(&mut self, path: &Path, t: u64, device: &Device) -> Result<()> {
        let map = candle_core::safetensors::load(path, device)?;
        for s in &self.slots {
            for (key, var) in [("m", &s.m), ("v", &s.v)] {
                let name = format!("{key}.{}", s.name);
                let saved = map.get(&name).ok_or_else(|| {
                    super::TrainError::Invalid(format!("{}: no tensor {name}", path.display()))
                })?;
                var.set(saved)?;
            }
        }
        self.t = t;
        Ok(())
    }
}
