//! Values a ring-bond product's states refer to by index (branch stacks, groups of twins):
//! each is stored once, so a state stays a few words however long the value, and equal values
//! get equal indices, so the product's states stay distinct only where they differ.

use std::hash::Hash;

use hashbrown::HashMap;

/// Values stored once, each named by its index; index 0 is the value given at creation.
pub(super) struct Interner<T> {
    values: Vec<T>,
    ids: HashMap<T, u32>,
}

impl<T: Clone + Eq + Hash> Interner<T> {
    /// An interner holding `first` as index 0.
    pub(super) fn new(first: T) -> Interner<T> {
        let mut ids = HashMap::new();
        ids.insert(first.clone(), 0);
        Interner {
            values: vec![first],
            ids,
        }
    }

    /// The value of index `id`.
    pub(super) fn get(&self, id: u32) -> &T {
        &self.values[id as usize]
    }

    /// The index of `value`, stored if new.
    pub(super) fn intern(&mut self, value: T) -> u32 {
        if let Some(&id) = self.ids.get(&value) {
            return id;
        }
        let id = self.values.len() as u32;
        self.values.push(value.clone());
        self.ids.insert(value, id);
        id
    }
}
