//! The boundary between generated code and Rust: the evaluation context generated code reads
//! by offset, the layout facts about [`Value`] it relies on, and the types shims take.
//!
//! Generated code reads and writes only the fields of [`Ctx`] (a `repr(C)` struct whose
//! offsets are taken with `offset_of!`), the tag and scalar payload of a `Value`, whose
//! layout `Value`'s `repr(u8)` fixes: a one-byte tag at offset 0, a `bool` payload at
//! offset 1, an `i64`/`u64`/`f64` payload at offset 8, and the slots of a schema-typed
//! object, where the few facts it relies on (where the object is behind its `Arc`, where its
//! layout and slots are, how an absent slot reads) are measured from a real object when the
//! first program needs them ([`object_abi`]), not assumed. Everything else is reached
//! through the `extern "C"` shims of [`crate::shims`].

use std::mem::offset_of;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use cel_runtime::object::{ObjectField, ObjectLayout, ObjectValue};
use cel_runtime::{Error, Value};
use cranelift_codegen::ir::types;

use crate::arena::Arena;

/// The context of one evaluation, shared by generated code and the shims; `'s` is how long
/// the evaluation's [`State`] lives.
#[repr(C)]
pub(crate) struct Ctx<'s> {
    /// The running cost (generated code keeps it in a register and stores it here before
    /// shims that add to it, and at exit).
    pub cost: i64,
    /// The cost limit (`i64::MAX` for none). A shim that must stop the evaluation sets it
    /// to -1, so that the next check leaves the generated code.
    pub limit: i64,
    /// The result's bits: a `*const Value`, an `i64`/`u64`, an `f64`'s bits or a bool.
    pub result: u64,
    /// The error handle a fallible shim produced (0 for none); read after each such call.
    pub err_out: u32,
    /// The result's error handle (0 for none).
    pub result_err: u32,
    /// Why the evaluation stopped early (one of the `STATUS_*` values), 0 otherwise.
    pub status: u32,
    /// The count of values and errors the evaluation has made (the arena's counter), read
    /// at loop back edges.
    pub made: *const u64,
    /// Rust-side state, opaque to generated code.
    pub state: *mut State<'s>,
    /// The host's interrupt flag (a flag that is never set when the host gave none), read
    /// at loop back edges.
    pub interrupt: *const AtomicBool,
}

/// The interrupt flag of evaluations the host cannot interrupt.
pub(crate) static NEVER_INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// A shim hit something generated code cannot express: the evaluation is redone by the
/// interpreter, which is the reference.
pub(crate) const STATUS_FALLBACK: u32 = 1;
/// A shim panicked: the evaluation fails with an internal error.
pub(crate) const STATUS_FATAL: u32 = 2;
/// The host interrupted the evaluation (generated code saw its flag at a back edge).
pub(crate) const STATUS_INTERRUPTED: u32 = 3;

pub(crate) const CTX_COST: i32 = offset_of!(Ctx<'static>, cost) as i32;
pub(crate) const CTX_LIMIT: i32 = offset_of!(Ctx<'static>, limit) as i32;
pub(crate) const CTX_RESULT: i32 = offset_of!(Ctx<'static>, result) as i32;
pub(crate) const CTX_ERR_OUT: i32 = offset_of!(Ctx<'static>, err_out) as i32;
pub(crate) const CTX_RESULT_ERR: i32 = offset_of!(Ctx<'static>, result_err) as i32;
pub(crate) const CTX_MADE: i32 = offset_of!(Ctx<'static>, made) as i32;
pub(crate) const CTX_STATUS: i32 = offset_of!(Ctx<'static>, status) as i32;
pub(crate) const CTX_INTERRUPT: i32 = offset_of!(Ctx<'static>, interrupt) as i32;

/// Where a value's tag is.
pub(crate) const VALUE_TAG: i32 = 0;
/// Where a `Bool`'s payload is.
pub(crate) const VALUE_BOOL: i32 = Value::BOOL_OFFSET as i32;
/// Where an `Int`'s, `Uint`'s or `Double`'s payload is.
pub(crate) const VALUE_SCALAR: i32 = Value::SCALAR_OFFSET as i32;

/// Where generated code finds a field of a schema-typed object ([`Value::Object`]): from the
/// payload word of the value (the object's `Arc`), the object is `arc_data` bytes on; in the
/// object, the word at `layout` identifies its layout and the word at `slots` is the address
/// of its slots, one `Option<Value>` (the size of a `Value`, and the value itself when
/// present) per declared field; an absent slot's first byte is `absent_tag`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ObjectAbi {
    pub arc_data: i32,
    pub layout: i32,
    pub slots: i32,
    pub absent_tag: u8,
}

/// The object facts of this build, measured once; `None` (and every field read through its
/// shim) if a real object does not bear them out.
pub(crate) fn object_abi() -> Option<ObjectAbi> {
    static ABI: OnceLock<Option<ObjectAbi>> = OnceLock::new();
    *ABI.get_or_init(measure_object_abi)
}

/// The machine word at `offset` bytes from `base`.
///
/// # Safety
///
/// `base + offset .. + 8` lies in one live allocation.
unsafe fn word_at(base: *const u8, offset: usize) -> usize {
    // SAFETY: the caller's contract; the read is unaligned-safe.
    unsafe { base.add(offset).cast::<usize>().read_unaligned() }
}

/// The word of an object that identifies its layout, as generated code reads it.
pub(crate) fn layout_word(abi: &ObjectAbi, object: &ObjectValue) -> u64 {
    // SAFETY: `abi.layout` was measured as the offset of the layout's `Arc`, one word inside
    // the object, which is alive for the call.
    unsafe { word_at((object as *const ObjectValue).cast(), abi.layout as usize) as u64 }
}

fn measure_object_abi() -> Option<ObjectAbi> {
    use std::mem::size_of;
    if size_of::<Option<Value>>() != size_of::<Value>()
        || size_of::<Arc<ObjectValue>>() != size_of::<usize>()
        || size_of::<Arc<ObjectLayout>>() != size_of::<usize>()
    {
        return None;
    }
    let field = |n: &str| ObjectField {
        name: n.into(),
        data_name: n.into(),
    };
    let layout = ObjectLayout::new("abi.Probe", vec![field("a"), field("b")]);
    let object = Arc::new(ObjectValue::new(
        layout,
        vec![Some(Value::Int(-7)), None],
        Vec::new(),
    ));
    let value = Value::Object(object.clone());
    let data = Arc::as_ptr(&object) as usize;
    // SAFETY: each read is of a word inside a live value or object: the value's payload
    // (bytes 8..16), the layout's `Arc` (one word at its `offset_of!`), the two words of the
    // slots' boxed slice (at its `offset_of!`), and the slots themselves (two `Value`-sized
    // slots, read within them).
    unsafe {
        let arc_word = word_at((&value as *const Value).cast(), VALUE_SCALAR as usize);
        let arc_data = data.checked_sub(arc_word)?;
        let layout = ObjectValue::LAYOUT_OFFSET;
        let layout_data = Arc::as_ptr(object.layout()) as usize;
        if word_at(data as *const u8, layout).checked_add(arc_data)? != layout_data {
            return None;
        }
        let slots_ptr = object.slots_ptr() as usize;
        let slots = [0, size_of::<usize>()]
            .into_iter()
            .map(|k| ObjectValue::SLOTS_OFFSET + k)
            .find(|at| word_at(data as *const u8, *at) == slots_ptr)?;
        let first = slots_ptr as *const u8;
        if *first != Value::TAG_INT || word_at(first, VALUE_SCALAR as usize) as i64 != -7 {
            return None;
        }
        let absent_tag = *first.add(size_of::<Option<Value>>());
        if absent_tag <= Value::TAG_OBJECT {
            return None;
        }
        Some(ObjectAbi {
            arc_data: i32::try_from(arc_data).ok()?,
            layout: i32::try_from(layout).ok()?,
            slots: i32::try_from(slots).ok()?,
            absent_tag,
        })
    }
}

/// Where the byte length of a `String`'s or a `Bytes`' payload lies in a `Value` (its fat
/// pointer's length word), measured once on values of two lengths; `None` if the two kinds
/// do not agree or neither word bears it out (then lengths are only read through shims).
pub(crate) fn text_len_offset() -> Option<i32> {
    static AT: OnceLock<Option<i32>> = OnceLock::new();
    *AT.get_or_init(measure_text_len_offset)
}

fn measure_text_len_offset() -> Option<i32> {
    use std::mem::size_of;
    let word = size_of::<usize>();
    let probes: Vec<(Value, usize)> = [3usize, 1021]
        .into_iter()
        .flat_map(|n| {
            let text = Value::string("a".repeat(n));
            let bytes = Value::Bytes(Arc::from(vec![0u8; n]));
            [(text, n), (bytes, n)]
        })
        .collect();
    let at = [VALUE_SCALAR as usize, VALUE_SCALAR as usize + word]
        .into_iter()
        .filter(|at| at + word <= size_of::<Value>())
        .find(|&at| {
            probes.iter().all(|(value, n)| {
                // SAFETY: `at + word` is within the value, which is alive.
                unsafe { word_at((value as *const Value).cast(), at) == *n }
            })
        })?;
    i32::try_from(at).ok()
}

/// The per-evaluation state behind [`Ctx::state`].
pub(crate) struct State<'a> {
    /// The variables.
    pub activation: &'a dyn cel_runtime::Activation,
    /// Values made during the evaluation.
    pub arena: Arena,
    /// Errors made during the evaluation; handle `n` is `errors[n - 1]`.
    pub errors: Vec<Error>,
    /// Why a shim stopped the evaluation (a caught panic, or a fallback's reason).
    pub stop: Option<Error>,
    /// The variable each `load.var` expression names (for "no such attribute" errors raised
    /// by generated code).
    pub names: &'a std::collections::HashMap<i64, std::sync::Arc<str>>,
    /// The slots of the present fields of the last few schema-typed objects iterated over
    /// (see `shims::present_slot`), each held so that its address stays its own.
    pub present_slots: Vec<(Arc<cel_runtime::object::ObjectValue>, Vec<usize>)>,
}

impl State<'_> {
    /// Ends the evaluation, freeing what it made. One that made nothing (most evaluations of
    /// scalar expressions) owns no storage and is simply forgotten: dropping its empty
    /// fields one by one took a tenth of a small expression's time in perf.
    #[inline(always)]
    pub(crate) fn end(self) {
        let owns_nothing = self.arena.owns_nothing()
            && self.errors.capacity() == 0
            && self.stop.is_none()
            && self.present_slots.capacity() == 0;
        if owns_nothing {
            std::mem::forget(self);
        } else {
            drop(self);
        }
    }

    /// Stores an error and returns its handle.
    #[inline]
    pub(crate) fn error(&mut self, e: Error) -> u32 {
        self.arena.note_made();
        self.errors.push(e);
        u32::try_from(self.errors.len()).unwrap_or(u32::MAX)
    }
}

/// A Rust type that crosses the boundary, with its Cranelift type.
pub(crate) trait AbiType {
    /// The Cranelift type of the parameter or result.
    const TYPE: types::Type;
    /// What a shim returns when its body panicked (the evaluation is abandoned).
    fn fallback() -> Self;
}

impl AbiType for i64 {
    const TYPE: types::Type = types::I64;
    fn fallback() -> i64 {
        0
    }
}

impl AbiType for u64 {
    const TYPE: types::Type = types::I64;
    fn fallback() -> u64 {
        0
    }
}

impl AbiType for u32 {
    const TYPE: types::Type = types::I32;
    fn fallback() -> u32 {
        0
    }
}

impl AbiType for f64 {
    const TYPE: types::Type = types::F64;
    fn fallback() -> f64 {
        0.0
    }
}

impl<'s> AbiType for *mut Ctx<'s> {
    const TYPE: types::Type = types::I64;
    fn fallback() -> *mut Ctx<'s> {
        std::ptr::null_mut()
    }
}

/// The null value, the placeholder value of an error path: generated code always holds a
/// valid pointer.
pub(crate) static NULL_VALUE: Value = Value::Null;

/// A call argument as generated code lays it out in a stack slot for a cost rule: the value,
/// its error handle, and its size when known at compile time (a constant's, a scalar's),
/// plus one (0: measure the value).
#[repr(C)]
pub(crate) struct ValErr {
    pub value: *const Value,
    pub err: u32,
    pub known_size: u32,
}

pub(crate) const VALERR_VALUE: i32 = offset_of!(ValErr, value) as i32;
pub(crate) const VALERR_ERR: i32 = offset_of!(ValErr, err) as i32;
pub(crate) const VALERR_KNOWN_SIZE: i32 = offset_of!(ValErr, known_size) as i32;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// The payload offsets generated code uses, read back from real values.
    #[test]
    fn value_layout_is_what_generated_code_assumes() {
        fn bytes(v: &Value) -> [u8; 16] {
            let mut out = [0u8; 16];
            // SAFETY: a `Value` is at least 16 bytes (tag, padding, 8-byte payload), and the
            // bytes read are those of a live value.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (v as *const Value).cast::<u8>(),
                    out.as_mut_ptr(),
                    16,
                );
            }
            out
        }
        let i = bytes(&Value::Int(-5));
        assert_eq!(i[0], Value::TAG_INT);
        assert_eq!(i64::from_ne_bytes(i[8..16].try_into().unwrap()), -5);
        let u = bytes(&Value::Uint(7));
        assert_eq!(u[0], Value::TAG_UINT);
        assert_eq!(u64::from_ne_bytes(u[8..16].try_into().unwrap()), 7);
        let d = bytes(&Value::Double(1.5));
        assert_eq!(d[0], Value::TAG_DOUBLE);
        assert_eq!(f64::from_ne_bytes(d[8..16].try_into().unwrap()), 1.5);
        let t = bytes(&Value::Bool(true));
        assert_eq!(t[0], Value::TAG_BOOL);
        assert_eq!(t[1], 1);
        assert_eq!(bytes(&Value::Null)[0], Value::TAG_NULL);
        assert_eq!(bytes(&Value::string("x"))[0], Value::TAG_STRING);
        assert_eq!(
            bytes(&Value::Bytes(Arc::from(&b"x"[..])))[0],
            Value::TAG_BYTES
        );
        // The length word is found, and it is the one after the data pointer on this build.
        let at = super::text_len_offset().expect("the length word is measured");
        let s = bytes(&Value::string("hello"));
        assert_eq!(at, 16);
        assert_ne!(usize::from_ne_bytes(s[8..16].try_into().unwrap()), 5);
        assert_eq!(bytes(&Value::Optional(None))[0], Value::TAG_OPTIONAL);
        assert_eq!(
            bytes(&Value::Opaque(Arc::new(Marker)))[0],
            Value::TAG_OPAQUE
        );
    }

    /// The smallest opaque value.
    #[derive(Debug)]
    struct Marker;

    impl cel_runtime::OpaqueValue for Marker {
        fn type_name(&self) -> &str {
            "test.Marker"
        }
        fn equals(&self, _other: &dyn cel_runtime::OpaqueValue) -> bool {
            true
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    /// The object facts are measured on this build (so typed field reads are compiled), and
    /// they describe other objects too: a field read through them is the field.
    #[test]
    fn objects_are_read_where_measured() {
        let abi = object_abi().expect("the object facts hold on this build");
        let field = |n: &str| ObjectField {
            name: n.into(),
            data_name: n.into(),
        };
        let layout = ObjectLayout::new("t", vec![field("x"), field("y"), field("z")]);
        let object = Arc::new(ObjectValue::new(
            layout.clone(),
            vec![None, Some(Value::string("here")), Some(Value::Null)],
            Vec::new(),
        ));
        let value = Value::Object(object.clone());
        // SAFETY: reads within the live value, object and slots, as generated code does.
        unsafe {
            let arc = word_at((&value as *const Value).cast(), VALUE_SCALAR as usize);
            let data = arc + abi.arc_data as usize;
            assert_eq!(data, Arc::as_ptr(&object) as usize);
            assert_eq!(
                layout_word(&abi, &object),
                word_at(data as *const u8, abi.layout as usize) as u64
            );
            let slots = word_at(data as *const u8, abi.slots as usize) as *const Value;
            assert_eq!(*(slots as *const u8), abi.absent_tag);
            assert_eq!(&*slots.add(1), &Value::string("here"));
            assert_eq!(*(slots.add(2) as *const u8), Value::TAG_NULL);
        }
        let other = ObjectValue::new(layout, vec![None, None, None], Vec::new());
        assert_eq!(layout_word(&abi, &other), layout_word(&abi, &object));
    }

    #[test]
    fn context_offsets() {
        assert_eq!(CTX_COST, 0);
        assert_eq!(CTX_LIMIT, 8);
        assert_eq!(std::mem::size_of::<ValErr>(), 16);
    }
}
