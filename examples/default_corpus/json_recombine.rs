//! Recombined JSON schemas, for the default model's `json` task: new object schemas whose
//! properties (a name with its schema) are drawn from the real schemas' top-level properties.
//!
//! The real schemas are few (about 4,000 usable), and each keeps its property names: a small
//! model trained on them learns which names are common (`"date"`, `"location"`) instead of
//! reading them from the prompt, and writes those names for any schema it has not seen. A
//! recombined schema puts real properties together in combinations no real schema has, so the
//! only way to predict an instance's names is to copy them from the schema in the prompt —
//! the skill held-out schemas need. Names and their schemas stay real, so the instances
//! (written by `json_synth`, checked like every other) read like real data.
//!
//! Only self-contained properties are taken (no `$ref`, whose target would be left behind).

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::json_synth::Draw;

/// The longest property schema taken (bytes, compact): the prompt holds several.
const MAX_PROPERTY_SCHEMA: usize = 160;
/// Properties in a recombined schema: from 1 to this many.
const MAX_PROPERTIES: usize = 5;

/// Real top-level properties, each `(name, schema)` once.
pub struct PropertyPool(Vec<(String, Value)>);

impl PropertyPool {
    /// Collects the top-level properties of `schemas` (those that are objects with
    /// `properties`), leaving out the ones that refer elsewhere or are long.
    pub fn new<'a>(schemas: impl IntoIterator<Item = &'a Value>) -> PropertyPool {
        let mut seen = HashSet::new();
        let mut pool = Vec::new();
        for schema in schemas {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                continue;
            };
            for (name, sub) in properties {
                let text = sub.to_string();
                if text.len() <= MAX_PROPERTY_SCHEMA
                    && sub.is_object()
                    && !text.contains("$ref")
                    && name.len() <= 32
                    && seen.insert(format!("{name}\u{0}{text}"))
                {
                    pool.push((name.clone(), sub.clone()));
                }
            }
        }
        PropertyPool(pool)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// A new object schema: 1 to [`MAX_PROPERTIES`] properties of distinct names, each
    /// required with probability 0.8, written as the function-call schemas most of MaskBench
    /// is (keywords in alphabetical order; properties too, half the time).
    pub fn schema(&self, draw: &mut Draw) -> Option<Value> {
        let wanted = 1 + draw.below(MAX_PROPERTIES);
        let mut properties = Map::new();
        let mut required = Vec::new();
        for _ in 0..wanted * 4 {
            if properties.len() == wanted {
                break;
            }
            let (name, sub) = draw.pick(&self.0)?;
            if properties.contains_key(name) {
                continue;
            }
            properties.insert(name.clone(), sub.clone());
            if draw.chance(0.8) {
                required.push(Value::String(name.clone()));
            }
        }
        if draw.chance(0.5) {
            properties.sort_keys();
        }
        Some(json!({"properties": properties, "required": required, "type": "object"}))
    }
}
