//! The shape of our schema tables (formats.md §0.2): a message is a root struct plus the
//! versions in which it is "flexible" (compact lengths and tagged fields).
//!
//! Kafka's generated readers and JSON converters test a field's versions only where the test
//! can differ among the versions a struct may be read at; a version outside that range behaves
//! like the nearest end of it. So every check here is made with the version clamped into the
//! struct's possible range ([`St::possible`]), which lets newer or negative versions decode
//! with the nearest known layout, exactly as Kafka does.

/// An inclusive range of versions; empty when `lo > hi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct V(pub i16, pub i16);

pub const NONE: V = V(1, 0);

pub const fn from(lo: i16) -> V {
    V(lo, i16::MAX)
}

pub const fn only(v: i16) -> V {
    V(v, v)
}

pub const fn span(lo: i16, hi: i16) -> V {
    V(lo, hi)
}

impl V {
    pub fn contains(self, v: i16) -> bool {
        self.0 <= v && v <= self.1
    }

    pub fn intersect(self, o: V) -> V {
        V(self.0.max(o.0), self.1.min(o.1))
    }

    pub fn clamp(self, v: i16) -> i16 {
        if self.0 > self.1 {
            v
        } else {
            v.clamp(self.0, self.1)
        }
    }
}

/// A field type. Arrays hold primitives or strings (`Arr`) or structs (`StructArr`).
#[derive(Debug, Clone, Copy)]
pub enum T {
    Bool,
    I8,
    I16,
    U16,
    I32,
    I64,
    F64,
    Uuid,
    Str,
    Bytes,
    /// Bytes read as a view of the buffer (Kafka's `zeroCopy`), which fails differently.
    ZcBytes,
    Struct(&'static St),
    Arr(&'static T),
    StructArr(&'static St),
}

/// An explicit default; `Zero` is the type's own (0, false, "", empty, zero uuid, empty struct).
#[derive(Debug, Clone, Copy)]
pub enum D {
    Zero,
    Null,
    Int(i64),
    Bool(bool),
}

#[derive(Debug, Clone, Copy)]
pub struct F {
    /// The field's name as the JSON converters print it (first letter lower-cased).
    pub name: &'static str,
    pub ty: T,
    pub versions: V,
    pub nullable: V,
    /// Tag number and tagged versions.
    pub tag: Option<(u32, V)>,
    pub default: D,
}

pub const fn f(name: &'static str, ty: T, versions: V) -> F {
    F {
        name,
        ty,
        versions,
        nullable: NONE,
        tag: None,
        default: D::Zero,
    }
}

impl F {
    pub const fn null(mut self, v: V) -> F {
        self.nullable = v;
        self
    }

    pub const fn tag(mut self, tag: u32, v: V) -> F {
        self.tag = Some((tag, v));
        self
    }

    pub const fn def(mut self, d: D) -> F {
        self.default = d;
        self
    }

    /// Tagged at (clamped) version `e`.
    pub fn tagged_at(&self, e: i16) -> bool {
        matches!(self.tag, Some((_, tv)) if tv.contains(e))
    }

    /// Present in the fixed (untagged) part at (clamped) version `e`.
    pub fn fixed_at(&self, e: i16) -> bool {
        self.versions.contains(e) && !self.tagged_at(e)
    }
}

/// Whether a struct is declared inline in a field (its versions are that field's versions and
/// Kafka checks the version when reading/writing it) or shared (a root or common struct).
pub const INLINE: bool = true;
pub const SHARED: bool = false;

#[derive(Debug)]
pub struct St {
    /// The class name, as Kafka's "Can't read version N of X" errors print it.
    pub name: &'static str,
    pub versions: V,
    pub inline: bool,
    pub fields: &'static [F],
}

pub const fn st(name: &'static str, versions: V, inline: bool, fields: &'static [F]) -> St {
    St {
        name,
        versions,
        inline,
        fields,
    }
}

impl St {
    /// The struct of a struct or struct-array field.
    pub fn child(&self, field: &str) -> Option<&'static St> {
        self.fields
            .iter()
            .find(|f| f.name == field)
            .and_then(|f| match f.ty {
                T::Struct(s) | T::StructArr(s) => Some(s),
                _ => None,
            })
    }

    /// The versions this struct can be read at, given those of its parent (`None` for a root).
    pub fn possible(&self, parent: Option<V>) -> V {
        match parent {
            Some(p) if self.inline => p.intersect(self.versions),
            _ => self.versions,
        }
    }
}

#[derive(Debug)]
pub struct Msg {
    pub flex: V,
    pub root: &'static St,
}

impl Msg {
    /// `version` when it is newer than the message's newest version: that newest version.
    pub fn newer_than_known(&self, version: i16) -> Option<i16> {
        let newest = self.root.versions.1;
        (version > newest).then_some(newest)
    }
}
