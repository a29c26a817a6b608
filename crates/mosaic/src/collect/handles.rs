//! Handle words: fixed-size chunks of atomic words that never move.
//!
//! Shared by strong root handles (`roots.rs`) and weak handles (`weak.rs`).
//! A handle keeps a pointer to its word, so reading it needs no lock; taking
//! and giving back a word happen under the owner's lock (a `Mutex<Words>`).
//! A free word always holds 0, so a scan may visit every word and skip the
//! zero ones.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

const CHUNK: usize = 256;

type Chunk = Box<[AtomicUsize; CHUNK]>;

/// The words of one handle table.
#[derive(Default)]
pub struct Words {
    chunks: Vec<Chunk>,
    free: Vec<u32>,
    used: usize,
}

impl Words {
    /// A word holding `value`, and its index (to give it back).
    pub fn take(&mut self, value: usize) -> (*const AtomicUsize, u32) {
        let index = match self.free.pop() {
            Some(i) => i as usize,
            None => {
                let i = self.chunks.len() * CHUNK;
                self.chunks
                    .push(Box::new(std::array::from_fn(|_| AtomicUsize::new(0))));
                self.free.extend((i as u32 + 1..(i + CHUNK) as u32).rev());
                i
            }
        };
        self.used += 1;
        let word = &self.chunks[index / CHUNK][index % CHUNK];
        word.store(value, Relaxed);
        (word, index as u32)
    }

    /// Clears word `index` and makes it free again.
    pub fn give_back(&mut self, index: u32) {
        let i = index as usize;
        self.chunks[i / CHUNK][i % CHUNK].store(0, Relaxed);
        self.free.push(index);
        self.used -= 1;
    }

    /// Words in use.
    pub fn used(&self) -> usize {
        self.used
    }

    /// Every word that holds a non-zero value.
    pub fn nonzero(&self) -> impl Iterator<Item = &AtomicUsize> {
        self.chunks
            .iter()
            .flat_map(|c| c.iter())
            .filter(|w| w.load(Relaxed) != 0)
    }
}
