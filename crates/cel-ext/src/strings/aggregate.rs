//! Lists and maps written as text by `%s`, for both string formatters (the current one in
//! [`super::format`] and the legacy one in [`super::legacy`]), without recursion: lists write
//! into the current buffer; each map value is written into a buffer of its own, since map
//! entries are sorted by their written keys (byte order, as Go sorts strings). What differs
//! between the formatters, how scalars and keys read and what separates a key from its
//! value, is an [`AggregateStyle`].

use cel_runtime::{Key, Value};

/// How one formatter writes the parts of a list or map.
pub(super) struct AggregateStyle {
    /// Writes an element that is neither a list nor a map (or fails for a type it cannot
    /// write).
    pub element: fn(&Value, &mut String) -> Result<(), String>,
    /// A map key's text.
    pub key: fn(&Key) -> String,
    /// Between a key and its value (`": "` or `":"`).
    pub key_separator: &'static str,
}

/// A list or map being written.
enum Frame<'a> {
    List {
        items: std::slice::Iter<'a, Value>,
        first: bool,
    },
    Map {
        /// Written keys with their values, still to be written.
        pending: std::vec::IntoIter<(String, &'a Value)>,
        /// Written entries.
        done: Vec<(String, String)>,
        /// The key whose value is being written into the top buffer.
        current: Option<String>,
    },
}

/// Writes `v` (a list or map at any depth, or an element) onto `out` in `style`.
pub(super) fn write_aggregate(
    v: &Value,
    out: &mut String,
    style: &AggregateStyle,
) -> Result<(), String> {
    let mut buffers: Vec<String> = vec![std::mem::take(out)];
    let mut frames: Vec<Frame<'_>> = Vec::new();
    let result = (|| {
        enter(v, &mut buffers, &mut frames, style)?;
        while let Some(frame) = frames.last_mut() {
            match frame {
                Frame::List { items, first } => match items.next() {
                    Some(item) => {
                        if !*first {
                            top(&mut buffers).push_str(", ");
                        }
                        *first = false;
                        enter(item, &mut buffers, &mut frames, style)?;
                    }
                    None => {
                        top(&mut buffers).push(']');
                        frames.pop();
                    }
                },
                Frame::Map {
                    pending,
                    done,
                    current,
                } => {
                    if let Some(key) = current.take() {
                        let value = buffers.pop().unwrap_or_default();
                        done.push((key, value));
                    }
                    match pending.next() {
                        Some((key, value)) => {
                            *current = Some(key);
                            buffers.push(String::new());
                            enter(value, &mut buffers, &mut frames, style)?;
                        }
                        None => {
                            let entries = std::mem::take(done);
                            frames.pop();
                            close_map(entries, top(&mut buffers), style);
                        }
                    }
                }
            }
        }
        Ok(())
    })();
    *out = buffers.into_iter().next().unwrap_or_default();
    result
}

/// Writes a map's entries, sorted by written key (Go's stable sort of the keys' bytes).
fn close_map(mut entries: Vec<(String, String)>, buf: &mut String, style: &AggregateStyle) {
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    buf.push('{');
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            buf.push_str(", ");
        }
        buf.push_str(k);
        buf.push_str(style.key_separator);
        buf.push_str(v);
    }
    buf.push('}');
}

fn top(buffers: &mut Vec<String>) -> &mut String {
    if buffers.is_empty() {
        buffers.push(String::new());
    }
    let last = buffers.len() - 1;
    &mut buffers[last]
}

/// Starts writing a value: elements at once, lists and maps push a frame.
fn enter<'a>(
    v: &'a Value,
    buffers: &mut Vec<String>,
    frames: &mut Vec<Frame<'a>>,
    style: &AggregateStyle,
) -> Result<(), String> {
    match v {
        Value::List(l) => {
            top(buffers).push('[');
            frames.push(Frame::List {
                items: l.iter(),
                first: true,
            });
            Ok(())
        }
        Value::Map(m) => {
            let pending: Vec<(String, &Value)> =
                m.iter().map(|(k, v)| ((style.key)(k), v)).collect();
            frames.push(Frame::Map {
                pending: pending.into_iter(),
                done: Vec::new(),
                current: None,
            });
            Ok(())
        }
        _ => (style.element)(v, top(buffers)),
    }
}
