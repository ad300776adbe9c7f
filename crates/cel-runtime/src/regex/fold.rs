//! Case-insensitive classes folded ahead of time, in time proportional to the pattern.
//!
//! Under `(?i)`, the `regex` crate expands every character class by Unicode's simple case
//! folding one code point at a time (`regex_syntax`'s `case_fold_simple` walks every code
//! point of every range it is given), so a class that spans most of Unicode costs about a
//! million table lookups: `(?i)[a\S]` (the translation of Go's `\S` inside brackets is a
//! nested negated class) takes tens of milliseconds, and fifty of them, 250 bytes of pattern,
//! took two seconds. Go folds the same classes in a fraction of that.
//!
//! Folding is a closure: a code point whose case-fold orbit is itself adds nothing, so
//! `fold(C) = C ∪ fold(C ∩ F)` where `F` holds the few thousand code points that have other
//! case variants. [`prefold`] rewrites each class in case-insensitive context, in a
//! case-sensitive group, as the class as written plus the case variants it lacks, computed
//! that way with the `regex_syntax` operations, level by level as its translator folds and
//! negates them: `(?i)[a\S]` becomes `(?-i:[a[^\t\n\f\r ]\x{41}])`. The pattern means
//! exactly what it meant (the tests compare the two patterns' HIR), and building it folds
//! nothing large. Classes with thousands of variants (`\p{Ll}`, whose variants are all of
//! `\p{Lu}`) add kilobytes of text each; past a bound proportional to the pattern, the
//! pattern is "too large", as a program of that size would be.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

use regex_syntax::ast::{self, Ast, ClassSet, ClassSetItem, Flag, Span};
use regex_syntax::hir::{self, ClassUnicode, ClassUnicodeRange, Hir, HirKind};

/// The code points that may have case variants: a superset of those whose simple case-fold
/// orbit is more than themselves (a test checks every code point against Unicode's table as
/// the `regex_syntax` crate has it).
fn foldable() -> &'static ClassUnicode {
    static FOLDABLE: OnceLock<ClassUnicode> = OnceLock::new();
    FOLDABLE.get_or_init(|| {
        standalone_class(r"[\p{Changes_When_Casemapped}\p{Changes_When_Casefolded}\p{Cased}]")
            .unwrap_or_else(|| {
                // Unreachable with the Unicode tables the `regex` crate ships; everything is
                // a safe (slow) superset.
                ClassUnicode::new([ClassUnicodeRange::new('\0', char::MAX)])
            })
    })
}

/// The class a pattern of one class denotes without case folding (`None` if it is not one).
fn standalone_class(pattern: &str) -> Option<ClassUnicode> {
    let hir = regex_syntax::ParserBuilder::new()
        .case_insensitive(false)
        .unicode(true)
        .utf8(true)
        .build()
        .parse(pattern)
        .ok()?;
    class_of(&hir)
}

/// The class a class-like HIR matches: a class, or the literal a one-member class becomes.
fn class_of(hir: &Hir) -> Option<ClassUnicode> {
    match hir.kind() {
        HirKind::Class(hir::Class::Unicode(c)) => Some(c.clone()),
        HirKind::Literal(hir::Literal(bytes)) => {
            let s = std::str::from_utf8(bytes).ok()?;
            let mut chars = s.chars();
            let c = chars.next()?;
            chars
                .next()
                .is_none()
                .then(|| ClassUnicode::new([ClassUnicodeRange::new(c, c)]))
        }
        _ => None,
    }
}

/// Why a pattern was not rewritten.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Prefold {
    /// There is nothing to rewrite: no `(?i`, a pattern the parser rejects (the `regex`
    /// crate reports it), or no class under `(?i)`.
    Unchanged,
    /// The pattern with its case-insensitive classes written out.
    Rewritten(String),
    /// Writing the classes out would add more text than [`added_text_limit`] allows: classes
    /// with that many case variants make a program past any reasonable size.
    TooLarge,
}

/// The most text the rewrite may add to a pattern of `len` bytes: ordinary classes add a few
/// bytes (`\pL` gains a dozen code points), the worst (`\p{Ll}`, whose case variants are all
/// of `\p{Lu}`) some kilobytes.
fn added_text_limit(len: usize) -> usize {
    (256 << 10) + 16 * len
}

/// Rewrites the classes of a translated pattern that are under `(?i)` (see the module docs).
pub(super) fn prefold(translated: &str) -> Prefold {
    if !has_case_insensitive_flag(translated) {
        return Prefold::Unchanged;
    }
    let Ok(ast) = ast::parse::Parser::new().parse(translated) else {
        return Prefold::Unchanged;
    };
    let finder = ClassFinder {
        pattern: translated,
        flags: vec![Flags::default()],
        out: Vec::new(),
        added: 0,
        limit: added_text_limit(translated.len()),
        items: HashMap::new(),
        classes: HashMap::new(),
    };
    let replacements = match ast::visit(&ast, finder) {
        Ok(r) => r,
        Err(TooLarge) => return Prefold::TooLarge,
    };
    if replacements.is_empty() {
        return Prefold::Unchanged;
    }
    let mut out = String::with_capacity(translated.len() + 16 * replacements.len());
    let mut at = 0;
    for (span, text) in replacements {
        out.push_str(translated.get(at..span.start.offset).unwrap_or(""));
        out.push_str(&text);
        at = span.end.offset;
    }
    out.push_str(translated.get(at..).unwrap_or(""));
    Prefold::Rewritten(out)
}

/// Whether a flag group turns on `i` somewhere (a cheap test before parsing).
fn has_case_insensitive_flag(pattern: &str) -> bool {
    pattern.match_indices("(?").any(|(at, _)| {
        pattern[at + 2..]
            .chars()
            .take_while(|c| *c != ')' && *c != ':')
            .any(|c| c == 'i')
    })
}

/// The flags that matter here, as the `regex_syntax` translator tracks them.
#[derive(Clone, Copy, Debug)]
struct Flags {
    case_insensitive: bool,
    unicode: bool,
}

impl Default for Flags {
    fn default() -> Flags {
        // `regex::RegexBuilder`'s defaults, which build the translated pattern.
        Flags {
            case_insensitive: false,
            unicode: true,
        }
    }
}

impl Flags {
    fn with(mut self, set: &ast::Flags) -> Flags {
        if let Some(on) = set.flag_state(Flag::CaseInsensitive) {
            self.case_insensitive = on;
        }
        if let Some(on) = set.flag_state(Flag::Unicode) {
            self.unicode = on;
        }
        self
    }
}

/// The rewrite would add more text than allowed.
struct TooLarge;

/// A class written for case-sensitive matching: the set it denotes under `(?i)`, and text
/// (a class item) that denotes that set without folding.
#[derive(Clone)]
struct Rendered {
    set: ClassUnicode,
    text: String,
}

/// The code points `(?i)` adds to `set`: the case variants of its members that it lacks.
fn variants_outside(set: &ClassUnicode) -> ClassUnicode {
    let mut variants = set.clone();
    variants.intersect(foldable());
    variants.case_fold_simple();
    variants.difference(set);
    variants
}

/// Appends ranges as class items.
fn push_ranges(out: &mut String, class: &ClassUnicode) {
    for r in class.ranges() {
        let _ = write!(out, "\\x{{{:X}}}", r.start() as u32);
        if r.end() != r.start() {
            let _ = write!(out, "-\\x{{{:X}}}", r.end() as u32);
        }
    }
}

/// Walks the pattern as the `regex_syntax` translator does (flags set by `(?i)` last to the
/// end of their group) and writes out each class under `(?i)`.
struct ClassFinder<'p> {
    pattern: &'p str,
    /// The flags in force, one entry per open group.
    flags: Vec<Flags>,
    out: Vec<(Span, String)>,
    /// The text the replacements add so far, and how much they may add.
    added: usize,
    limit: usize,
    /// Sets of class items by their text, and replacements of whole classes by theirs: a
    /// pattern that repeats a class pays for it once.
    items: HashMap<String, Option<ClassUnicode>>,
    classes: HashMap<String, Option<String>>,
}

impl<'p> ClassFinder<'p> {
    fn current(&self) -> Flags {
        self.flags.last().copied().unwrap_or_default()
    }

    /// The text of a span of the pattern.
    fn text(&self, span: &Span) -> &'p str {
        self.pattern
            .get(span.start.offset..span.end.offset)
            .unwrap_or("")
    }

    /// Replaces the class at `span` by what `render` writes (unless it cannot be written:
    /// then the `regex` crate folds it, as it would have).
    fn replace(
        &mut self,
        span: Span,
        render: impl FnOnce(&mut Self) -> Option<Rendered>,
    ) -> Result<(), TooLarge> {
        let original = self.text(&span);
        let text = match self.classes.get(original) {
            Some(known) => known.clone(),
            None => {
                let text = render(self).map(|r| format!("(?-i:{})", r.text));
                self.classes.insert(original.to_string(), text.clone());
                text
            }
        };
        let Some(text) = text else {
            return Ok(());
        };
        self.added += text.len().saturating_sub(original.len());
        if self.added > self.limit {
            return Err(TooLarge);
        }
        self.out.push((span, text));
        Ok(())
    }

    /// The set of a class item as written, without folding (`\pL`, `[:alpha:]`, `\d`).
    fn item_set(&mut self, text: &str) -> Option<ClassUnicode> {
        if let Some(known) = self.items.get(text) {
            return known.clone();
        }
        let set = standalone_class(&format!("[{text}]"));
        self.items.insert(text.to_string(), set.clone());
        set
    }

    /// A bracketed class: its items, the case variants they lack, then the negation, as the
    /// translator folds and negates each level. Set operations (`&&`, `--`, `~~`, which the
    /// Go translation never writes) are left to the `regex` crate.
    fn bracketed(&mut self, b: &ast::ClassBracketed) -> Option<Rendered> {
        let ClassSet::Item(item) = &b.kind else {
            return None;
        };
        let inner = self.item(item)?;
        let variants = variants_outside(&inner.set);
        let mut text = String::from(if b.negated { "[^" } else { "[" });
        text.push_str(&inner.text);
        push_ranges(&mut text, &variants);
        text.push(']');
        let mut set = inner.set;
        set.union(&variants);
        if b.negated {
            set.negate();
        }
        Some(Rendered { set, text })
    }

    fn item(&mut self, item: &ClassSetItem) -> Option<Rendered> {
        let text = self.text(item.span());
        match item {
            ClassSetItem::Empty(_) => Some(Rendered {
                set: ClassUnicode::empty(),
                text: String::new(),
            }),
            // Literals, ranges and Perl classes (`\d`, which the translator folds no more than
            // the `regex` crate does) as written: the enclosing level adds their variants.
            ClassSetItem::Literal(_) | ClassSetItem::Range(_) | ClassSetItem::Perl(_) => {
                Some(Rendered {
                    set: self.item_set(text)?,
                    text: text.to_string(),
                })
            }
            ClassSetItem::Ascii(a) => self.negatable(text, a.negated),
            ClassSetItem::Unicode(u) => self.negatable(text, u.is_negated()),
            ClassSetItem::Bracketed(b) => self.bracketed(b),
            ClassSetItem::Union(u) => {
                let mut out = Rendered {
                    set: ClassUnicode::empty(),
                    text: String::new(),
                };
                for item in &u.items {
                    let r = self.item(item)?;
                    out.set.union(&r.set);
                    out.text.push_str(&r.text);
                }
                Some(out)
            }
        }
    }

    /// A Unicode or ASCII class item: as written unless it is a negation, which the translator
    /// applies after folding the class it negates, `¬fold(P)`: then `[^[^item]variants]`.
    fn negatable(&mut self, text: &str, negated: bool) -> Option<Rendered> {
        let set = self.item_set(text)?;
        if !negated {
            return Some(Rendered {
                set,
                text: text.to_string(),
            });
        }
        let mut positive = set.clone();
        positive.negate();
        let variants = variants_outside(&positive);
        if variants.ranges().is_empty() {
            return Some(Rendered {
                set,
                text: text.to_string(),
            });
        }
        let mut text = format!("[^[^{text}]");
        push_ranges(&mut text, &variants);
        text.push(']');
        positive.union(&variants);
        positive.negate();
        Some(Rendered {
            set: positive,
            text,
        })
    }
}

impl ast::Visitor for ClassFinder<'_> {
    type Output = Vec<(Span, String)>;
    type Err = TooLarge;

    fn finish(self) -> Result<Vec<(Span, String)>, TooLarge> {
        Ok(self.out)
    }

    fn visit_pre(&mut self, ast: &Ast) -> Result<(), TooLarge> {
        let flags = self.current();
        match ast {
            Ast::Group(g) => {
                let inner = match &g.kind {
                    ast::GroupKind::NonCapturing(set) => flags.with(set),
                    _ => flags,
                };
                self.flags.push(inner);
            }
            Ast::Flags(set) => {
                if let Some(top) = self.flags.last_mut() {
                    *top = flags.with(&set.flags);
                }
            }
            _ if !(flags.case_insensitive && flags.unicode) => {}
            Ast::ClassBracketed(b) => self.replace(b.span, |f| f.bracketed(b))?,
            // `\pL` alone is the class `[\pL]`, folded as such.
            Ast::ClassUnicode(u) => self.replace(u.span, |f| {
                let text = f.text(&u.span);
                let item = f.negatable(text, u.is_negated())?;
                let variants = variants_outside(&item.set);
                let mut text = format!("[{}", item.text);
                push_ranges(&mut text, &variants);
                text.push(']');
                Some(Rendered {
                    set: ClassUnicode::empty(),
                    text,
                })
            })?,
            // `\d`, `\s`, `\w` and their negations are not folded (they need not be).
            _ => {}
        }
        Ok(())
    }

    fn visit_post(&mut self, ast: &Ast) -> Result<(), TooLarge> {
        if let Ast::Group(_) = ast {
            self.flags.pop();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hir(pattern: &str) -> Hir {
        regex_syntax::Parser::new()
            .parse(pattern)
            .expect("a valid pattern")
    }

    /// The rewritten pattern means what the original meant: equal HIR.
    fn same_meaning(pattern: &str) {
        let rewritten = match prefold(pattern) {
            Prefold::Rewritten(p) => p,
            Prefold::Unchanged => pattern.to_string(),
            Prefold::TooLarge => panic!("{pattern} is not too large"),
        };
        assert_eq!(hir(pattern), hir(&rewritten), "{pattern} → {rewritten}");
    }

    #[test]
    fn folded_classes_mean_what_they_meant() {
        for p in [
            r"(?i)[a\S]",
            r"(?i)[a[^\t\n\f\r ]]",
            r"(?i)[^a[^\t\n\f\r ]]",
            r"(?i)[\x{0}-\x{10FFFF}]",
            r"(?i)[^k]",
            r"(?i)[k\x{212A}]x",
            r"(?i)\pL+",
            r"(?i)\PL",
            r"(?i)\p{Greek}\P{Lu}",
            r"(?i)[[:alpha:][:^digit:]]",
            r"(?i)[\p{Lu}--\p{Greek}]",
            r"(?i)[\p{Lu}&&[A-Z]]",
            r"(?i)[\p{Lu}~~[a-z]]",
            r"a(?i)[b-z](?-i)[c-y]",
            r"(?i:[b-z])[c-y]",
            r"(?i)a|[ß]|(?-i:[s])",
            r"((?i)[σ])[σ]",
            r"(?i)(?-u:[a-z])",
            r"(?i)[^\x{0}-\x{10FFFF}]",
            r"(?i)\d\w[\d\W]",
        ] {
            same_meaning(p);
        }
    }

    #[test]
    fn patterns_without_case_insensitive_classes_are_left_alone() {
        assert_eq!(prefold("[a-z]+"), Prefold::Unchanged);
        assert_eq!(prefold("(?s).(?m)^"), Prefold::Unchanged);
        assert_eq!(prefold("(?i)abc"), Prefold::Unchanged);
        assert_eq!(prefold("(?i)[a"), Prefold::Unchanged);
    }

    /// Ordinary classes gain a few code points, not the thousands of ranges they span.
    #[test]
    fn classes_are_written_with_their_variants_only() {
        let Prefold::Rewritten(p) = prefold(r"(?i)[a[^\t\n\f\r ]]") else {
            panic!("rewritten");
        };
        assert_eq!(p, r"(?i)(?-i:[a[^\t\n\f\r ]])");
        let Prefold::Rewritten(p) = prefold(r"x(?i)[a-c]+") else {
            panic!("rewritten");
        };
        assert_eq!(p, r"x(?i)(?-i:[a-c\x{41}-\x{43}])+");
        let Prefold::Rewritten(p) = prefold(r"(?i)\pL") else {
            panic!("rewritten");
        };
        assert!(p.len() < 100, "{p}");
        let Prefold::Rewritten(p) = prefold(&r"(?i)[\x{0}-\x{10FFFF}]".repeat(1000)) else {
            panic!("rewritten");
        };
        assert!(p.len() < 40_000, "{} bytes", p.len());
    }

    /// Classes whose variants take kilobytes each stop at the bound on added text.
    #[test]
    fn classes_with_thousands_of_variants_are_bounded() {
        let one = prefold(r"(?i)\p{Ll}");
        assert!(
            matches!(&one, Prefold::Rewritten(p) if p.len() > 2_000),
            "{one:?}"
        );
        let many = format!("(?i){}", r"\p{Ll}\p{Lu}".repeat(100));
        assert_eq!(prefold(&many), Prefold::TooLarge);
        let error = crate::regex::compile(&many).expect_err("too large");
        assert!(
            error.to_string().contains("expression too large"),
            "{error}"
        );
    }

    /// The superset [`variants_outside`] intersects with holds every code point with a case variant.
    #[test]
    fn foldable_holds_every_code_point_with_case_variants() {
        let set = foldable();
        let mut missing = Vec::new();
        for cp in 0..=0x10FFFF_u32 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let mut one = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
            one.case_fold_simple();
            if one.ranges() != [ClassUnicodeRange::new(c, c)] {
                let mut alone = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
                alone.intersect(set);
                if alone.ranges().is_empty() {
                    missing.push(cp);
                }
            }
        }
        assert!(missing.is_empty(), "not in the set: {missing:x?}");
    }
}
