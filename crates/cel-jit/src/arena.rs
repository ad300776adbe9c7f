//! The per-evaluation arena: runtime values created while generated code runs.
//!
//! Generated code holds values as `*const Value`. A value made during an evaluation (a call's
//! result, a boxed scalar, a list being built) is moved into the arena, whose chunks never
//! move or shrink, so that every pointer handed out stays valid until the evaluation ends
//! and the arena drops its values. Chunks are allocated on demand: an evaluation that makes
//! no values allocates nothing.

use std::mem::MaybeUninit;
use std::ptr::NonNull;

use cel_runtime::Value;

/// The first chunk's capacity; later chunks double, up to [`MAX_CHUNK`].
const FIRST_CHUNK: usize = 16;
const MAX_CHUNK: usize = 4096;

/// One chunk: a fixed-capacity block of values, the first `len` initialised.
struct Chunk {
    base: NonNull<MaybeUninit<Value>>,
    cap: usize,
    len: usize,
}

impl Chunk {
    fn new(cap: usize) -> Chunk {
        let block: Box<[MaybeUninit<Value>]> = Box::new_uninit_slice(cap);
        let base = NonNull::new(Box::into_raw(block).cast::<MaybeUninit<Value>>())
            .expect("a box is never null");
        Chunk { base, cap, len: 0 }
    }

    fn contains(&self, p: *const Value) -> bool {
        let start = self.base.as_ptr() as usize;
        let end = start + self.len * std::mem::size_of::<Value>();
        (start..end).contains(&(p as usize))
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // SAFETY: the first `len` slots were initialised by `Arena::alloc` and are dropped
        // once here; the block was made by `Box::new_uninit_slice(cap)` and is rebuilt with
        // the same length to be freed.
        unsafe {
            let values =
                std::ptr::slice_from_raw_parts_mut(self.base.as_ptr().cast::<Value>(), self.len);
            std::ptr::drop_in_place(values);
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.base.as_ptr(),
                self.cap,
            )));
        }
    }
}

/// Values owned by one evaluation, at stable addresses.
#[derive(Default)]
pub(crate) struct Arena {
    chunks: Vec<Chunk>,
}

impl Arena {
    /// Moves a value into the arena and returns its address, valid until the arena drops.
    #[inline]
    pub(crate) fn alloc(&mut self, v: Value) -> *mut Value {
        let need_chunk = match self.chunks.last() {
            Some(c) => c.len == c.cap,
            None => true,
        };
        if need_chunk {
            let cap = self
                .chunks
                .last()
                .map(|c| (c.cap * 2).min(MAX_CHUNK))
                .unwrap_or(FIRST_CHUNK);
            self.chunks.push(Chunk::new(cap));
        }
        let chunk = self.chunks.last_mut().expect("a chunk with room");
        // SAFETY: `len < cap`, so the slot is inside the chunk's block and uninitialised;
        // writing it initialises it, and `len` grows to cover it.
        unsafe {
            let slot = chunk.base.as_ptr().add(chunk.len);
            (*slot).write(v);
            chunk.len += 1;
            slot.cast::<Value>()
        }
    }

    /// Whether a pointer is to a value of this arena (which may then be updated in place).
    pub(crate) fn owns(&self, p: *const Value) -> bool {
        self.chunks.iter().rev().any(|c| c.contains(p))
    }

    /// The number of values held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.chunks.iter().map(|c| c.len).sum()
    }
}

// SAFETY: the arena owns its values exclusively (the raw pointers are to its own blocks), and
// `Value` is `Send`, so moving the arena to another thread moves the values with it.
unsafe impl Send for Arena {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_stay_valid_across_chunks() {
        let mut a = Arena::default();
        let ptrs: Vec<*mut Value> = (0..10_000).map(|i| a.alloc(Value::Int(i))).collect();
        assert_eq!(a.len(), 10_000);
        for (i, p) in ptrs.iter().enumerate() {
            // SAFETY: the arena is alive and never moves its values.
            let v = unsafe { &**p };
            assert!(matches!(v, Value::Int(x) if *x == i as i64));
            assert!(a.owns(*p));
        }
        let outside = Value::Null;
        assert!(!a.owns(&outside));
    }

    #[test]
    fn drops_its_values() {
        let s: std::sync::Arc<str> = "shared".into();
        {
            let mut a = Arena::default();
            for _ in 0..100 {
                a.alloc(Value::String(s.clone()));
            }
            assert_eq!(std::sync::Arc::strong_count(&s), 101);
        }
        assert_eq!(std::sync::Arc::strong_count(&s), 1);
    }
}
