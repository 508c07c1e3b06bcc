//! One generic reader of Kafka's message encoding (formats.md §0.2), driven by the tables.
//!
//! It fails where Kafka's generated readers fail and with the same exception texts, since
//! kafka-dump-log prints them (`… due to: Error reading byte array of 5 byte(s): only 2 byte(s)
//! available.`). A Java buffer underflow has no message: Kafka prints `null` for it.

use super::schema::{Msg, St, D, F, T, V};

/// A Java exception as the decoders see it: its class and `getMessage()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaError {
    pub class: &'static str,
    pub message: Option<String>,
}

pub const RUNTIME: &str = "java.lang.RuntimeException";
pub const ILLEGAL_ARGUMENT: &str = "java.lang.IllegalArgumentException";
pub const ILLEGAL_STATE: &str = "java.lang.IllegalStateException";
pub const NULL_POINTER: &str = "java.lang.NullPointerException";
pub const UNSUPPORTED_VERSION: &str = "org.apache.kafka.common.errors.UnsupportedVersionException";

impl JavaError {
    pub fn new(class: &'static str, message: impl Into<String>) -> Self {
        JavaError {
            class,
            message: Some(message.into()),
        }
    }

    pub fn underflow() -> Self {
        JavaError {
            class: "java.nio.BufferUnderflowException",
            message: None,
        }
    }

    pub fn null_pointer() -> Self {
        JavaError {
            class: NULL_POINTER,
            message: None,
        }
    }

    /// `getMessage()`, as string concatenation prints it.
    pub fn message(&self) -> String {
        self.message.clone().unwrap_or_else(|| "null".to_string())
    }

    /// `toString()`: the class name, then `: message` when there is one.
    pub fn to_java_string(&self) -> String {
        match &self.message {
            Some(m) => format!("{}: {m}", self.class),
            None => self.class.to_string(),
        }
    }
}

pub type JResult<T> = Result<T, JavaError>;

/// A decoded field value. Structs hold one value per schema field (defaults where absent).
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Null,
    Bool(bool),
    Int(i64),
    F64(f64),
    Uuid([u8; 16]),
    Str(String),
    Bytes(Vec<u8>),
    Arr(Vec<Val>),
    Struct(Vec<Val>),
}

impl Val {
    pub fn field<'v>(&'v self, st: &St, name: &str) -> Option<&'v Val> {
        match self {
            Val::Struct(vals) => st
                .fields
                .iter()
                .position(|f| f.name == name)
                .map(|i| &vals[i]),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Val::Int(n) => Some(*n),
            _ => None,
        }
    }
}

/// A Java `ByteBuffer` read from its position on.
pub struct Buf<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Buf<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Buf { bytes, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        &self.bytes[self.pos..]
    }

    fn take(&mut self, n: usize) -> JResult<&'a [u8]> {
        if self.remaining() < n {
            return Err(JavaError::underflow());
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn fixed<const N: usize>(&mut self) -> JResult<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub fn i8(&mut self) -> JResult<i8> {
        Ok(self.fixed::<1>()?[0] as i8)
    }

    pub fn i16(&mut self) -> JResult<i16> {
        Ok(i16::from_be_bytes(self.fixed()?))
    }

    pub fn i32(&mut self) -> JResult<i32> {
        Ok(i32::from_be_bytes(self.fixed()?))
    }

    pub fn i64(&mut self) -> JResult<i64> {
        Ok(i64::from_be_bytes(self.fixed()?))
    }

    /// Kafka's `readUnsignedVarint`: at most 5 bytes, the result an `int` (it may come out
    /// negative when the 5th byte carries high bits).
    pub fn uvarint(&mut self) -> JResult<i32> {
        let mut result: i32 = 0;
        for i in 0..5 {
            let b = self.i8()?;
            if i == 4 {
                result |= (b as i32).wrapping_shl(28);
                if b < 0 {
                    return Err(JavaError::new(
                        ILLEGAL_ARGUMENT,
                        format!(
                            "Varint is too long, the most significant bit in the 5th byte is set, converted value: {:x}",
                            result as u32
                        ),
                    ));
                }
                break;
            }
            if b >= 0 {
                result |= (b as i32) << (7 * i);
                break;
            }
            result |= ((b as i32) & 0x7f) << (7 * i);
        }
        Ok(result)
    }

    /// `Readable.readArray`: a byte array of a length already read.
    pub fn array(&mut self, size: i32) -> JResult<&'a [u8]> {
        let remaining = self.remaining();
        if i64::from(size) > remaining as i64 {
            return Err(JavaError::new(
                RUNTIME,
                format!("Error reading byte array of {size} byte(s): only {remaining} byte(s) available"),
            ));
        }
        if size < 0 {
            return Err(JavaError::new(
                "java.lang.NegativeArraySizeException",
                size.to_string(),
            ));
        }
        self.take(size as usize)
    }
}

/// Reads `msg` at `version` from `buf`; trailing bytes are left for the caller.
pub fn read_message(msg: &Msg, buf: &mut Buf<'_>, version: i16) -> JResult<Val> {
    read_struct(msg, msg.root, None, buf, version)
}

fn read_struct(msg: &Msg, st: &St, parent: Option<V>, buf: &mut Buf<'_>, v: i16) -> JResult<Val> {
    if let Some(p) = parent.filter(|_| st.inline) {
        if !p.contains(st.versions.clamp(v)) {
            return Err(JavaError::new(
                UNSUPPORTED_VERSION,
                format!("Can't read version {v} of {}", st.name),
            ));
        }
    }
    let cur = st.possible(parent);
    let e = cur.clamp(v);
    let flexible = msg.flex.contains(e);
    let mut vals = Vec::with_capacity(st.fields.len());
    for f in st.fields {
        if f.fixed_at(e) {
            vals.push(read_field(msg, f, cur, buf, v, e, false)?);
        } else {
            vals.push(default_val(f));
        }
    }
    if flexible {
        let count = buf.uvarint()?;
        for _ in 0..count.max(0) {
            let tag = buf.uvarint()?;
            let size = buf.uvarint()?;
            let known = st.fields.iter().position(|f| {
                matches!(f.tag, Some((t, tv)) if i64::from(t) == i64::from(tag)
                    && !is_empty(f.versions.intersect(tv)))
            });
            match known {
                Some(i) => {
                    let f = &st.fields[i];
                    if !f.tagged_at(e) || !f.versions.contains(e) {
                        return Err(JavaError::new(
                            RUNTIME,
                            format!("Tag {tag} is not valid for version {v}"),
                        ));
                    }
                    vals[i] = read_field(msg, f, cur, buf, v, e, true)?;
                }
                None => {
                    buf.array(size)?;
                }
            }
        }
    }
    Ok(Val::Struct(vals))
}

fn is_empty(v: V) -> bool {
    v.0 > v.1
}

/// Reads one field of a struct whose possible versions are `cur`, at clamped version `e`.
fn read_field(
    msg: &Msg,
    f: &F,
    cur: V,
    buf: &mut Buf<'_>,
    v: i16,
    e: i16,
    tagged: bool,
) -> JResult<Val> {
    let flexible = msg.flex.contains(e);
    let nullable = f.nullable.contains(e);
    match f.ty {
        T::Struct(s) => {
            if nullable {
                let is_null = if tagged {
                    buf.uvarint()? <= 0
                } else {
                    buf.i8()? < 0
                };
                if is_null {
                    return Ok(Val::Null);
                }
            }
            read_struct(msg, s, Some(cur), buf, v)
        }
        T::Arr(elem) => {
            let Some(n) = read_count(buf, flexible, nullable, f.name)? else {
                return Ok(Val::Null);
            };
            let what = format!("{} element", f.name);
            let mut items = Vec::new();
            for _ in 0..n {
                items.push(read_scalar(elem, buf, flexible, false, &what)?);
            }
            Ok(Val::Arr(items))
        }
        T::StructArr(s) => {
            let Some(n) = read_count(buf, flexible, nullable, f.name)? else {
                return Ok(Val::Null);
            };
            let mut items = Vec::new();
            for _ in 0..n {
                items.push(read_struct(msg, s, Some(cur), buf, v)?);
            }
            Ok(Val::Arr(items))
        }
        ty => read_scalar(&ty, buf, flexible, nullable, f.name),
    }
}

/// An array's element count, `None` for null; Kafka refuses counts above the bytes left.
fn read_count(
    buf: &mut Buf<'_>,
    flexible: bool,
    nullable: bool,
    name: &str,
) -> JResult<Option<i32>> {
    let n = if flexible {
        buf.uvarint()?.wrapping_sub(1)
    } else {
        buf.i32()?
    };
    if n < 0 {
        return null_or_error(nullable, name).map(|_| None);
    }
    if n as usize > buf.remaining() {
        return Err(JavaError::new(
            RUNTIME,
            format!(
                "Tried to allocate a collection of size {n}, but there are only {} bytes remaining.",
                buf.remaining()
            ),
        ));
    }
    Ok(Some(n))
}

fn null_or_error(nullable: bool, name: &str) -> JResult<Val> {
    if nullable {
        Ok(Val::Null)
    } else {
        Err(JavaError::new(
            RUNTIME,
            format!("non-nullable field {name} was serialized as null"),
        ))
    }
}

fn read_scalar(
    ty: &T,
    buf: &mut Buf<'_>,
    flexible: bool,
    nullable: bool,
    name: &str,
) -> JResult<Val> {
    Ok(match ty {
        T::Bool => Val::Bool(buf.i8()? != 0),
        T::I8 => Val::Int(buf.i8()?.into()),
        T::I16 => Val::Int(buf.i16()?.into()),
        T::U16 => Val::Int((buf.i16()? as u16).into()),
        T::I32 => Val::Int(buf.i32()?.into()),
        T::I64 => Val::Int(buf.i64()?),
        T::F64 => Val::F64(f64::from_bits(buf.i64()? as u64)),
        T::Uuid => {
            let mut u = [0u8; 16];
            u.copy_from_slice(buf.take(16)?);
            Val::Uuid(u)
        }
        T::Str => {
            let len = if flexible {
                buf.uvarint()?.wrapping_sub(1)
            } else {
                buf.i16()?.into()
            };
            if len < 0 {
                return null_or_error(nullable, name);
            }
            if len > 0x7fff {
                return Err(JavaError::new(
                    RUNTIME,
                    format!("string field {name} had invalid length {len}"),
                ));
            }
            Val::Str(crate::format::java_utf8::lossy(buf.array(len)?).into_owned())
        }
        T::Bytes | T::ZcBytes => {
            let len = if flexible {
                buf.uvarint()?.wrapping_sub(1)
            } else {
                buf.i32()?
            };
            if len < 0 {
                return null_or_error(nullable, name);
            }
            if matches!(ty, T::ZcBytes) && len as usize > buf.remaining() {
                // A view of the buffer: the slice's limit is set past its capacity.
                return Err(JavaError::new(
                    ILLEGAL_ARGUMENT,
                    format!("newLimit > capacity: ({len} > {})", buf.remaining()),
                ));
            }
            Val::Bytes(buf.array(len)?.to_vec())
        }
        // Nested structs and arrays of arrays do not occur as array elements.
        T::Struct(_) | T::Arr(_) | T::StructArr(_) => Val::Null,
    })
}

/// The value a field has when the version lacks it or its tag is absent.
pub fn default_val(f: &F) -> Val {
    match f.default {
        D::Null => Val::Null,
        D::Bool(b) => Val::Bool(b),
        D::Int(n) if matches!(f.ty, T::F64) => Val::F64(n as f64),
        D::Int(n) => Val::Int(n),
        D::Zero => zero_val(&f.ty),
    }
}

fn zero_val(ty: &T) -> Val {
    match ty {
        T::Bool => Val::Bool(false),
        T::I8 | T::I16 | T::U16 | T::I32 | T::I64 => Val::Int(0),
        T::F64 => Val::F64(0.0),
        T::Uuid => Val::Uuid([0; 16]),
        T::Str => Val::Str(String::new()),
        T::Bytes | T::ZcBytes => Val::Bytes(Vec::new()),
        T::Arr(_) | T::StructArr(_) => Val::Arr(Vec::new()),
        T::Struct(s) => Val::Struct(s.fields.iter().map(default_val).collect()),
    }
}
