//! Noticing, without allocating, that serde skipped a field: a deserializer that wraps another and
//! raises a flag when a map's value is read as `IgnoredAny`, which is what a derived type does with
//! a field it does not have. It says whether, in the same parse; the strict parser
//! (`serde_ignored`, which builds each field's path) then says which, only when one was.
//!
//! What serde reads through its own buffer (tagged and untagged enums, flattened structs) is out of
//! sight here, as it is for the strict parser.

use std::cell::Cell;
use std::fmt;

use serde::de::{
    DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};

/// Deserializes a `T`, and says whether a field was skipped on the way.
pub(super) fn deserialize_noticing<'de, T, D>(deserializer: D) -> Result<(T, bool), D::Error>
where
    T: serde::Deserialize<'de>,
    D: Deserializer<'de>,
{
    let skipped = Cell::new(false);
    let value = T::deserialize(Watched {
        inner: deserializer,
        skipped: &skipped,
        map_value: false,
    })?;
    Ok((value, skipped.get()))
}

/// A deserializer whose visitors are watched; `map_value` when it reads a map's value.
struct Watched<'a, D> {
    inner: D,
    skipped: &'a Cell<bool>,
    map_value: bool,
}

/// A visitor handed on with every map, list, option and enum it is given watched too.
struct WatchedVisitor<'a, V> {
    inner: V,
    skipped: &'a Cell<bool>,
}

/// A seed whose deserializer is watched.
struct WatchedSeed<'a, S> {
    inner: S,
    skipped: &'a Cell<bool>,
    map_value: bool,
}

macro_rules! forward_deserialize {
    ($($method:ident($($argument:ident: $type:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(
            self,
            $($argument: $type,)*
            visitor: V,
        ) -> Result<V::Value, D::Error> {
            let visitor = WatchedVisitor { inner: visitor, skipped: self.skipped };
            self.inner.$method($($argument,)* visitor)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Watched<'_, D> {
    type Error = D::Error;

    forward_deserialize! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        if self.map_value {
            self.skipped.set(true);
        }
        self.inner.deserialize_ignored_any(visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for WatchedSeed<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.inner.deserialize(Watched {
            inner: deserializer,
            skipped: self.skipped,
            map_value: self.map_value,
        })
    }
}

macro_rules! forward_visit {
    ($($method:ident($type:ty);)*) => {$(
        fn $method<E: serde::de::Error>(self, value: $type) -> Result<V::Value, E> {
            self.inner.$method(value)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for WatchedVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(formatter)
    }

    forward_visit! {
        visit_bool(bool);
        visit_i8(i8);
        visit_i16(i16);
        visit_i32(i32);
        visit_i64(i64);
        visit_i128(i128);
        visit_u8(u8);
        visit_u16(u16);
        visit_u32(u32);
        visit_u64(u64);
        visit_u128(u128);
        visit_f32(f32);
        visit_f64(f64);
        visit_char(char);
        visit_str(&str);
        visit_borrowed_str(&'de str);
        visit_string(String);
        visit_bytes(&[u8]);
        visit_borrowed_bytes(&'de [u8]);
        visit_byte_buf(Vec<u8>);
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(Watched {
            inner: deserializer,
            skipped: self.skipped,
            map_value: false,
        })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(Watched {
            inner: deserializer,
            skipped: self.skipped,
            map_value: false,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, items: A) -> Result<V::Value, A::Error> {
        self.inner.visit_seq(WatchedAccess {
            inner: items,
            skipped: self.skipped,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, entries: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(WatchedAccess {
            inner: entries,
            skipped: self.skipped,
        })
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(WatchedAccess {
            inner: data,
            skipped: self.skipped,
        })
    }
}

/// A map, list, enum or variant whose contents are watched.
struct WatchedAccess<'a, A> {
    inner: A,
    skipped: &'a Cell<bool>,
}

impl<'a, A> WatchedAccess<'a, A> {
    fn seed<S>(&self, inner: S, map_value: bool) -> WatchedSeed<'a, S> {
        WatchedSeed {
            inner,
            skipped: self.skipped,
            map_value,
        }
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for WatchedAccess<'_, A> {
    type Error = A::Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        let seed = self.seed(seed, false);
        self.inner.next_element_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for WatchedAccess<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.inner.next_key_seed(seed)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        let seed = self.seed(seed, true);
        self.inner.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'a, 'de, A: EnumAccess<'de>> EnumAccess<'de> for WatchedAccess<'a, A> {
    type Error = A::Error;
    type Variant = WatchedAccess<'a, A::Variant>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), A::Error> {
        let (value, variant) = self.inner.variant_seed(seed)?;
        Ok((
            value,
            WatchedAccess {
                inner: variant,
                skipped: self.skipped,
            },
        ))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for WatchedAccess<'_, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.inner.unit_variant()
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, A::Error> {
        let seed = self.seed(seed, false);
        self.inner.newtype_variant_seed(seed)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        let visitor = WatchedVisitor {
            inner: visitor,
            skipped: self.skipped,
        };
        self.inner.tuple_variant(len, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        let visitor = WatchedVisitor {
            inner: visitor,
            skipped: self.skipped,
        };
        self.inner.struct_variant(fields, visitor)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use serde::Deserialize;

    use super::*;

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Person {
        name: String,
        home: Option<Place>,
        visits: Vec<Place>,
        tags: HashMap<String, String>,
        pet: Option<Pet>,
        extra: Option<serde_json::Value>,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Place {
        city: String,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    enum Pet {
        Cat { lives: u8 },
        Dog(Place),
    }

    fn skipped(raw: &str) -> bool {
        let mut deserializer = serde_json::Deserializer::from_str(raw);
        let (_, skipped) = deserialize_noticing::<Person, _>(&mut deserializer).unwrap();
        skipped
    }

    #[test]
    fn a_skipped_field_is_noticed_at_any_depth() {
        let base = r#""name":"Li","visits":[],"tags":{}"#;
        assert!(!skipped(&format!(
            r#"{{{base},"home":{{"city":"Xi'an"}},"pet":{{"Cat":{{"lives":9}}}},"extra":{{"any":1}}}}"#
        )));
        assert!(!skipped(
            r#"{"name":"Li","visits":[{"city":"A"}],"tags":{"k":"v"}}"#
        ));
        assert!(skipped(&format!(r#"{{{base},"nmae":"Li"}}"#)));
        assert!(skipped(&format!(
            r#"{{{base},"home":{{"city":"A","ctiy":"B"}}}}"#
        )));
        assert!(skipped(
            r#"{"name":"Li","visits":[{"city":"A"},{"city":"B","town":"C"}],"tags":{}}"#
        ));
        assert!(skipped(&format!(
            r#"{{{base},"pet":{{"Cat":{{"lives":9,"naps":3}}}}}}"#
        )));
        assert!(skipped(&format!(
            r#"{{{base},"pet":{{"Dog":{{"city":"A","x":1}}}}}}"#
        )));
    }
}
