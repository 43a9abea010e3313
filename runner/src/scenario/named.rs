//! A handle on a registry's entry (a fault action, a workload kind) reads and writes as its
//! name, exactly as a unit-only enum of the registry's names would: the same messages from
//! serde, so `scenario::wording` words an unknown name the same way for each.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// A type whose values are the entries of one registry, named.
pub trait Named: Copy + 'static {
    /// The enum's name serde reports (`Action`, `WorkloadKind`).
    const ENUM: &'static str;
    /// Every name, in registry order.
    fn names() -> &'static [&'static str];
    /// The entry of a name.
    fn named(name: &str) -> Option<Self>;
}

/// Reads a [`Named`] as a unit variant of an enum of its names.
pub fn deserialize<'de, D: Deserializer<'de>, T: Named>(deserializer: D) -> Result<T, D::Error> {
    struct EnumVisitor<T>(PhantomData<T>);
    impl<'de, T: Named> Visitor<'de> for EnumVisitor<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "enum {}", T::ENUM)
        }
        fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<T, A::Error> {
            use de::VariantAccess;
            let (Variant(named), variant) = data.variant::<Variant<T>>()?;
            variant.unit_variant()?;
            Ok(named)
        }
    }
    deserializer.deserialize_enum(T::ENUM, T::names(), EnumVisitor(PhantomData))
}

/// The variant name (or index) of a [`Named`].
struct Variant<T>(T);

impl<'de, T: Named> Deserialize<'de> for Variant<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct VariantVisitor<T>(PhantomData<T>);
        impl<T: Named> Visitor<'_> for VariantVisitor<T> {
            type Value = Variant<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("variant identifier")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Variant<T>, E> {
                let names = T::names();
                names
                    .get(v as usize)
                    .and_then(|name| T::named(name))
                    .map(Variant)
                    .ok_or_else(|| {
                        de::Error::invalid_value(
                            de::Unexpected::Unsigned(v),
                            &format!("variant index 0 <= i < {}", names.len()).as_str(),
                        )
                    })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Variant<T>, E> {
                T::named(v)
                    .map(Variant)
                    .ok_or_else(|| de::Error::unknown_variant(v, T::names()))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Variant<T>, E> {
                match std::str::from_utf8(v) {
                    Ok(s) => self.visit_str(s),
                    Err(_) => Err(de::Error::invalid_value(de::Unexpected::Bytes(v), &self)),
                }
            }
        }
        deserializer.deserialize_identifier(VariantVisitor(PhantomData))
    }
}

/// The variant names serde's derive gave an enum (its `rename_all` applied), asked of the
/// enum's own `Deserialize`: the names a scenario can write, kept nowhere else.
pub fn variants_of<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    match T::deserialize(AskVariants) {
        Err(Asked::Variants(variants)) => variants,
        _ => &[],
    }
}

/// A deserializer that answers nothing and reports the variants an enum asks it for.
struct AskVariants;

#[derive(Debug)]
enum Asked {
    Variants(&'static [&'static str]),
    NotAnEnum,
}

impl fmt::Display for Asked {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("asked for an enum's variants")
    }
}

impl std::error::Error for Asked {}

impl de::Error for Asked {
    fn custom<M: fmt::Display>(_: M) -> Asked {
        Asked::NotAnEnum
    }
}

impl<'de> Deserializer<'de> for AskVariants {
    type Error = Asked;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Asked> {
        Err(Asked::NotAnEnum)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Asked> {
        Err(Asked::Variants(variants))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct identifier
        ignored_any
    }
}
