//! Reading the arguments object of a `#[tool]` into its parameters, with no type of the tool's
//! own: the parameters are a list of [`Slot`]s (`(Slot<A>, (Slot<B>, ()))`), read by one visitor
//! that takes the fields from the tool's table. This is what serde's derive on a struct of the
//! parameters would do (unknown fields refused, a repeated field refused, a field left out read
//! as `None` by an `Option` or filled by its default), in the same words and the same order of
//! errors, but written once here: `#[tool]` generates no `Deserialize` impl, and tools whose
//! parameters have the same types share one instance of it.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, Visitor};

use super::typed::FieldSpec;

/// One parameter: what it becomes when the model leaves it out (its `#[arg(default)]`, or else
/// what serde makes of a missing field: `None` for an `Option`, an error for anything else).
pub struct Slot<P> {
    default: Option<fn() -> P>,
}

impl<P> Slot<P> {
    /// A parameter without a default.
    pub const fn new() -> Self {
        Slot { default: None }
    }

    /// A parameter filled by `default` when left out.
    pub const fn or(default: fn() -> P) -> Self {
        Slot {
            default: Some(default),
        }
    }
}

impl<P> Default for Slot<P> {
    fn default() -> Self {
        Slot::new()
    }
}

impl<P> Clone for Slot<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for Slot<P> {}

/// The parameters of a tool, in order: `()` for none, `(Slot<P>, Rest)` for a parameter and the
/// ones after it. Row `i` of the tool's field table describes slot `i`.
pub trait Slots: Copy {
    /// The parsed parameters: `(P, Rest::Values)`.
    type Values;
    /// The parameters found so far: `(Option<P>, Rest::Found)`.
    type Found: Default;

    /// Reads the value of field `index` (of `fields`, this slot's row first) from `map`.
    fn fill<'de, A: MapAccess<'de>>(
        found: &mut Self::Found,
        index: usize,
        fields: &[FieldSpec],
        map: &mut A,
    ) -> Result<(), A::Error>;

    /// The parameters, once the object is read: those left out by their default or as missing.
    fn finish<E: de::Error>(
        self,
        found: Self::Found,
        fields: &[FieldSpec],
    ) -> Result<Self::Values, E>;
}

impl Slots for () {
    type Values = ();
    type Found = ();

    fn fill<'de, A: MapAccess<'de>>(
        _: &mut (),
        _: usize,
        _: &[FieldSpec],
        map: &mut A,
    ) -> Result<(), A::Error> {
        // Never: the table has a row per slot, and a key is a row's name.
        map.next_value::<IgnoredAny>().map(|_| ())
    }

    fn finish<E: de::Error>(self, _: (), _: &[FieldSpec]) -> Result<(), E> {
        Ok(())
    }
}

impl<P: DeserializeOwned, Rest: Slots> Slots for (Slot<P>, Rest) {
    type Values = (P, Rest::Values);
    type Found = (Option<P>, Rest::Found);

    #[inline]
    fn fill<'de, A: MapAccess<'de>>(
        found: &mut Self::Found,
        index: usize,
        fields: &[FieldSpec],
        map: &mut A,
    ) -> Result<(), A::Error> {
        let (name, rest) = split(fields);
        match index.checked_sub(1) {
            None if found.0.is_some() => Err(de::Error::duplicate_field(name)),
            None => {
                found.0 = Some(map.next_value()?);
                Ok(())
            }
            Some(index) => Rest::fill(&mut found.1, index, rest, map),
        }
    }

    #[inline]
    fn finish<E: de::Error>(
        self,
        found: Self::Found,
        fields: &[FieldSpec],
    ) -> Result<Self::Values, E> {
        let (name, rest) = split(fields);
        let value = match (found.0, self.0.default) {
            (Some(value), _) => value,
            (None, Some(default)) => default(),
            (None, None) => P::deserialize(Missing(name, PhantomData))?,
        };
        Ok((value, self.1.finish(found.1, rest)?))
    }
}

/// The first row's name, and the rows after it.
#[inline]
fn split(fields: &[FieldSpec]) -> (&'static str, &[FieldSpec]) {
    match fields.split_first() {
        Some((first, rest)) => (first.name, rest),
        None => ("", &[]),
    }
}

/// Reads a tool's arguments object into its slots.
pub(crate) struct ArgumentsSeed<'f, S> {
    pub(crate) fields: &'f [FieldSpec],
    pub(crate) slots: S,
}

impl<'de, S: Slots> DeserializeSeed<'de> for ArgumentsSeed<'_, S> {
    type Value = S::Values;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Values, D::Error> {
        // The name is the one serde's derive gave the argument struct; JSON does not use the list
        // of fields.
        deserializer.deserialize_struct("__Arguments", &[], self)
    }
}

impl<'de, S: Slots> Visitor<'de> for ArgumentsSeed<'_, S> {
    type Value = S::Values;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("struct __Arguments")
    }

    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<S::Values, A::Error> {
        let mut found = S::Found::default();
        while let Some(index) = map.next_key_seed(FieldName(self.fields))? {
            S::fill(&mut found, index, self.fields, &mut map)?;
        }
        self.slots.finish(found, self.fields)
    }
}

/// A key of the arguments object: the index of its row, or an unknown field.
struct FieldName<'f>(&'f [FieldSpec]);

impl<'de> DeserializeSeed<'de> for FieldName<'_> {
    type Value = usize;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for FieldName<'_> {
    type Value = usize;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("field identifier")
    }

    #[inline]
    fn visit_str<E: de::Error>(self, key: &str) -> Result<usize, E> {
        for (index, field) in self.0.iter().enumerate() {
            // Byte by byte: names are short, and a call of `memcmp` each costs more.
            if field.name.len() == key.len() && field.name.bytes().eq(key.bytes()) {
                return Ok(index);
            }
        }
        Err(unknown_field(key, self.0))
    }
}

/// serde's `Error::unknown_field`, in its words, for a list of names that is not `'static`.
#[cold]
pub(crate) fn unknown_field<E: de::Error>(key: &str, fields: &[FieldSpec]) -> E {
    struct OneOf<'f>(&'f [FieldSpec]);
    impl fmt::Display for OneOf<'_> {
        fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self.0 {
                [one] => write!(formatter, "`{}`", one.name),
                [first, second] => write!(formatter, "`{}` or `{}`", first.name, second.name),
                fields => {
                    formatter.write_str("one of ")?;
                    for (index, field) in fields.iter().enumerate() {
                        if index > 0 {
                            formatter.write_str(", ")?;
                        }
                        write!(formatter, "`{}`", field.name)?;
                    }
                    Ok(())
                }
            }
        }
    }
    if fields.is_empty() {
        E::custom(format_args!("unknown field `{key}`, there are no fields"))
    } else {
        E::custom(format_args!(
            "unknown field `{key}`, expected {}",
            OneOf(fields)
        ))
    }
}

/// What serde's derive reads a missing field from: `None` for an `Option`, else the error
/// "missing field".
struct Missing<E>(&'static str, PhantomData<E>);

impl<'de, E: de::Error> Deserializer<'de> for Missing<E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, E> {
        Err(E::missing_field(self.0))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;
    use crate::tool::arguments::typed::FieldSpec;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Derived {
        label: String,
        times: Option<u32>,
        #[serde(default = "three")]
        count: u8,
    }

    fn three() -> u8 {
        3
    }

    type Parameters = (Slot<String>, (Slot<Option<u32>>, (Slot<u8>, ())));

    fn fields() -> [FieldSpec; 3] {
        [
            FieldSpec::of::<String>("label", true, true, ""),
            FieldSpec::of::<Option<u32>>("times", false, true, ""),
            FieldSpec::of::<u8>("count", false, true, ""),
        ]
    }

    fn parse(raw: &str) -> Result<<Parameters as Slots>::Values, String> {
        let fields = fields();
        let slots: Parameters = (Slot::new(), (Slot::new(), (Slot::or(three), ())));
        let mut deserializer = serde_json::Deserializer::from_str(raw);
        let values = ArgumentsSeed {
            fields: &fields,
            slots,
        }
        .deserialize(&mut deserializer)
        .and_then(|values| deserializer.end().map(|()| values));
        values.map_err(|error| error.to_string())
    }

    /// Whatever the derive on a struct of the same fields says, the slots say, word for word.
    #[test]
    fn the_slots_read_as_serde_derive_reads() {
        let cases = [
            r#"{"label": "a", "times": 2, "count": 1}"#,
            r#"{"label": "a"}"#,
            r#"{"times": 2}"#,
            r#"{"label": "a", "label": "b"}"#,
            r#"{"label": "a", "colour": 1}"#,
            r#"{"label": 1}"#,
            r#"{"label": "a", "times": null}"#,
            r#"{"label": "a", "count": 300}"#,
            r#"{"label": "a",}"#,
            r#"{"label": "a"} x"#,
            r#"{"label": "a", "times": 1e400}"#,
            r#"{"label": "a", "times": [}"#,
        ];
        for raw in cases {
            let derived = serde_json::from_str::<Derived>(raw)
                .map(|derived| (derived.label, (derived.times, (derived.count, ()))))
                .map_err(|error| error.to_string());
            assert_eq!(parse(raw), derived, "{raw}");
        }
    }

    #[test]
    fn unknown_fields_are_worded_as_serde_words_them() {
        let fields = fields();
        for count in 0..=3 {
            let names: &'static [&'static str] = &["label", "times", "count"][..count];
            let serde: serde_json::Error = de::Error::unknown_field("colour", names);
            let ours: serde_json::Error = unknown_field("colour", &fields[..count]);
            assert_eq!(ours.to_string(), serde.to_string());
        }
    }
}
