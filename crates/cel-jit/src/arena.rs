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
/// The weight of a value that may own storage in [`Arena::made`]'s count, and the count at
/// which a loop frees its temporaries.
pub(crate) const HEAVY: u64 = 64;
const _: () = assert!(
    MAX_CHUNK < 1 << 16,
    "a chunk's length must fit an ArenaMark's bits"
);

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
        self.truncate(0);
    }

    /// Drops the values from index `keep` on, keeping the block.
    fn truncate(&mut self, keep: usize) {
        if keep >= self.len {
            return;
        }
        let len = std::mem::replace(&mut self.len, keep);
        // SAFETY: slots `keep..len` were initialised; `len` already says `keep`, so even a
        // panicking drop cannot lead to a second drop of them.
        unsafe {
            let values = std::ptr::slice_from_raw_parts_mut(
                self.base.as_ptr().cast::<Value>().add(keep),
                len - keep,
            );
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
    /// An empty chunk freed by [`Arena::release`], reused before allocating another.
    spare: Option<Chunk>,
    /// How much the evaluation has made so far, weighted (never decreases): a value that
    /// may own storage (a string, a list, ...) or an error counts [`HEAVY`], a boxed scalar
    /// or a value sharing the storage of one that outlives the evaluation
    /// ([`Arena::alloc_shared`]) one. Generated code reads it at a loop's back edge and
    /// frees the loop's temporaries once [`HEAVY`] was made since the last release: at once
    /// after anything that may be large, every 64 iterations for loops that only box
    /// scalars or share storage (a few KiB at most).
    made: u64,
}

/// A position in an [`Arena`]: the values allocated before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ArenaMark {
    full: usize,
    len: usize,
}

impl ArenaMark {
    /// The mark in 32 bits (16 for the current chunk's length, at most [`MAX_CHUNK`], and
    /// 16 for the number of full chunks), or `None` past 2^16 chunks (hundreds of
    /// millions of values: such an evaluation simply frees nothing early).
    pub(crate) fn to_bits(self) -> Option<u32> {
        let full = u32::try_from(self.full).ok().filter(|f| *f < 1 << 16)?;
        Some((full << 16) | self.len as u32)
    }

    pub(crate) fn from_bits(bits: u32) -> ArenaMark {
        ArenaMark {
            full: (bits >> 16) as usize,
            len: (bits & 0xffff) as usize,
        }
    }
}

impl Drop for Arena {
    /// Inlined: an evaluation that allocated nothing (most scalar expressions) pays a test.
    #[inline]
    fn drop(&mut self) {
        if let Some(current) = self.current.take() {
            Arena::keep_as_spare(current);
        }
    }
}

impl Arena {
    /// Empties the last chunk and keeps it for the thread's next evaluation.
    #[inline(never)]
    fn keep_as_spare(mut current: Chunk) {
        current.clear();
        // `try_with`: during thread teardown the spare is simply freed.
        let _ = SPARE.try_with(|s| s.set(Some(current)));
    }
}

impl Arena {
    /// Moves a value into the arena and returns its address, valid until the arena drops.
    #[inline]
    pub(crate) fn alloc(&mut self, v: Value) -> *mut Value {
        let weight = match v {
            Value::Null | Value::Bool(_) | Value::Int(_) | Value::Uint(_) | Value::Double(_) => 1,
            _ => HEAVY,
        };
        self.alloc_weighing(v, weight)
    }

    /// [`Arena::alloc`] counting `weight` in [`Arena::made`].
    #[inline]
    fn alloc_weighing(&mut self, v: Value, weight: u64) -> *mut Value {
        self.made += weight;
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

    /// [`Arena::alloc`] for a value that shares its storage with one that outlives the
    /// evaluation (a map's key, a field's name: a reference count raised), which weighs as a
    /// scalar does: a loop making one per iteration frees them every 64 iterations, not at
    /// every one.
    #[inline]
    pub(crate) fn alloc_shared(&mut self, v: Value) -> *mut Value {
        self.alloc_weighing(v, 1)
    }

    /// Makes room: the thread's spare chunk or a new one to start with, then chunks of
    /// twice the size.
    #[cold]
    fn next_chunk(&mut self) -> &mut Chunk {
        let next = match self.current.take() {
            Some(full) => {
                let cap = (full.cap * 2).min(MAX_CHUNK);
                self.full.push(full);
                match self.spare.take() {
                    Some(spare) => spare,
                    None => Chunk::new(cap),
                }
            }
            None => SPARE
                .try_with(|s| s.take())
                .ok()
                .flatten()
                .unwrap_or_else(|| Chunk::new(FIRST_CHUNK)),
        };
        self.current.insert(next)
    }

    /// Whether the arena holds no chunk, so that forgetting it leaks nothing.
    #[inline(always)]
    pub(crate) fn owns_nothing(&self) -> bool {
        self.current.is_none() && self.full.capacity() == 0 && self.spare.is_none()
    }

    /// Whether a pointer is to a value of this arena (which may then be updated in place).
    pub(crate) fn owns(&self, p: *const Value) -> bool {
        self.current
            .iter()
            .chain(self.full.iter().rev())
            .any(|c| c.contains(p))
    }

    /// The counter of values and errors made, for generated code to read.
    pub(crate) fn made_counter(&self) -> *const u64 {
        &self.made
    }

    /// How many values and errors were made so far.
    pub(crate) fn made(&self) -> u64 {
        self.made
    }

    /// Counts an error made (errors live beside the arena; see `State::error`).
    pub(crate) fn note_made(&mut self) {
        self.made += HEAVY;
    }

    /// Where the values end now: the number of full chunks and the current chunk's length.
    /// Values allocated later may be freed by [`Arena::release`] with this mark.
    pub(crate) fn mark(&self) -> ArenaMark {
        ArenaMark {
            full: self.full.len(),
            len: self.current.as_ref().map_or(0, |c| c.len),
        }
    }

    /// Drops the values allocated since `mark`, except those the words of `keep` point to
    /// (as addresses), which move to new places, written back into `keep` (an address
    /// listed twice gets one new place). Null addresses and values older than the mark are
    /// left as they are.
    pub(crate) fn release(&mut self, mark: ArenaMark, keep: &mut [u64]) {
        if self.mark() == mark {
            return;
        }
        if keep.is_empty() {
            // Most loops keep nothing of the arena's between iterations (their accumulator
            // is a scalar, or lives elsewhere).
            self.truncate(mark);
            return;
        }
        let addr = |w: u64| w as usize as *const Value;
        // Clones of the survivors: the originals are dropped below, so each survivor's
        // storage is again owned once (updates in place stay possible).
        let mut kept: Vec<(u64, Value)> = Vec::new();
        for w in keep.iter() {
            if *w != 0 && self.allocated_since(mark, addr(*w)) && !kept.iter().any(|(q, _)| q == w)
            {
                // SAFETY: the address is of one of this arena's live values (just checked),
                // which nothing mutates while the shim runs.
                kept.push((*w, unsafe { (*addr(*w)).clone() }));
            }
        }
        self.truncate(mark);
        let moved: Vec<(u64, u64)> = kept
            .into_iter()
            .map(|(old, v)| (old, self.alloc(v) as usize as u64))
            .collect();
        // Each word is rewritten once, from its old address: a survivor's new place may be
        // another survivor's old one, so rewriting word by word as each moved would send
        // a word just rewritten on to the next survivor's place.
        for w in keep.iter_mut() {
            if let Some((_, new)) = moved.iter().find(|(old, _)| old == w) {
                *w = *new;
            }
        }
    }

    /// Whether `p` is a value allocated after `mark`.
    fn allocated_since(&self, mark: ArenaMark, p: *const Value) -> bool {
        let later_chunks = self.full.iter().skip(mark.full).chain(self.current.iter());
        for (i, c) in later_chunks.enumerate() {
            if c.contains(p) {
                if i > 0 {
                    return true;
                }
                let start = c.base.as_ptr() as usize + mark.len * std::mem::size_of::<Value>();
                return p as usize >= start;
            }
        }
        false
    }

    /// Drops every value allocated after `mark`; the chunks made since become the spare.
    fn truncate(&mut self, mark: ArenaMark) {
        while self.full.len() > mark.full {
            let Some(previous) = self.full.pop() else {
                break;
            };
            if let Some(mut later) = self.current.replace(previous) {
                later.clear();
                // The largest freed chunk is kept for the next `next_chunk`.
                if self.spare.as_ref().is_none_or(|s| s.cap < later.cap) {
                    self.spare = Some(later);
                }
            }
        }
        if let Some(c) = &mut self.current {
            c.truncate(mark.len);
        }
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
    fn release_moves_each_survivor_to_its_own_place() {
        // Survivors listed in another order than they were made: the first moves into the
        // second's old place. Each word must end at its own value (a fuzzer found native
        // code reading a `cel.bind` value as the list made before it).
        let mut a = Arena::default();
        a.alloc(Value::Int(0));
        let mark = a.mark();
        let list = a.alloc(Value::list(Vec::new())) as usize as u64;
        let _dead = a.alloc(Value::Int(1));
        let string = a.alloc(Value::from("zz")) as usize as u64;
        let mut keep = [string, 0, list, string];
        a.release(mark, &mut keep);
        // SAFETY: the words are addresses of the arena's live values, written by `release`.
        let at = |w: u64| unsafe { &*(w as usize as *const Value) };
        assert_eq!(at(keep[0]), &Value::from("zz"));
        assert_eq!(keep[1], 0);
        assert_eq!(at(keep[2]), &Value::list(Vec::new()));
        assert_eq!(keep[3], keep[0]);
        assert_eq!(a.len(), 3);
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
