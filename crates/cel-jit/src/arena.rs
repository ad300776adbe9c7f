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

    /// Drops the values, keeping the block.
    fn clear(&mut self) {
        let len = std::mem::replace(&mut self.len, 0);
        // SAFETY: the first `len` slots were initialised; `len` is already 0, so even a
        // panicking drop cannot lead to a second drop of them.
        unsafe {
            let values =
                std::ptr::slice_from_raw_parts_mut(self.base.as_ptr().cast::<Value>(), len);
            std::ptr::drop_in_place(values);
        }
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

std::thread_local! {
    /// An empty first chunk kept from the thread's last evaluation: most evaluations need
    /// one chunk, and reusing it saves an allocation and a free per evaluation.
    static SPARE: std::cell::Cell<Option<Chunk>> = const { std::cell::Cell::new(None) };
}

/// Values owned by one evaluation, at stable addresses.
#[derive(Default)]
pub(crate) struct Arena {
    /// The chunk values go to (none until the first value).
    current: Option<Chunk>,
    /// Chunks filled before it.
    full: Vec<Chunk>,
}

impl Drop for Arena {
    fn drop(&mut self) {
        if let Some(mut current) = self.current.take() {
            current.clear();
            // `try_with`: during thread teardown the spare is simply freed.
            let _ = SPARE.try_with(|s| s.set(Some(current)));
        }
    }
}

impl Arena {
    /// Moves a value into the arena and returns its address, valid until the arena drops.
    #[inline]
    pub(crate) fn alloc(&mut self, v: Value) -> *mut Value {
        let chunk = match &mut self.current {
            Some(c) if c.len < c.cap => c,
            _ => self.next_chunk(),
        };
        // SAFETY: `len < cap`, so the slot is inside the chunk's block and uninitialised;
        // writing it initialises it, and `len` grows to cover it.
        unsafe {
            let slot = chunk.base.as_ptr().add(chunk.len);
            (*slot).write(v);
            chunk.len += 1;
            slot.cast::<Value>()
        }
    }

    /// Makes room: the thread's spare chunk or a new one to start with, then chunks of
    /// twice the size.
    #[cold]
    fn next_chunk(&mut self) -> &mut Chunk {
        let next = match self.current.take() {
            Some(full) => {
                let cap = (full.cap * 2).min(MAX_CHUNK);
                self.full.push(full);
                Chunk::new(cap)
            }
            None => SPARE
                .try_with(|s| s.take())
                .ok()
                .flatten()
                .unwrap_or_else(|| Chunk::new(FIRST_CHUNK)),
        };
        self.current.insert(next)
    }

    /// Whether a pointer is to a value of this arena (which may then be updated in place).
    pub(crate) fn owns(&self, p: *const Value) -> bool {
        self.current
            .iter()
            .chain(self.full.iter().rev())
            .any(|c| c.contains(p))
    }

    /// The number of values held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.current.iter().chain(&self.full).map(|c| c.len).sum()
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
