//! Which fields a schema names, compiled once into a small tree, and one pass over a JSON text
//! that finds a field none names (which serde would drop silently), allocating nothing.

use std::collections::HashMap;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::is_closed;

/// The fields a schema names at every depth it can be followed to.
#[derive(Debug, Clone)]
pub(super) struct KnownFields {
    /// The root is node 0.
    nodes: Vec<Node>,
}

#[derive(Debug, Clone)]
enum Node {
    /// Anything goes here (a scalar, a map, no schema): what is below is not looked at.
    Open,
    /// An object with these fields; another is unknown when `closed`.
    Object {
        fields: Vec<(String, usize)>,
        closed: bool,
    },
    /// A list whose items are node `items`.
    List { items: usize },
    /// One of several shapes of object (an enum of structs): which, this pass cannot tell.
    Undecided,
    /// The same as another node (a reference).
    Same(usize),
}

/// How many references in a row are followed before a node counts as open.
const MAX_HOPS: usize = 16;

impl KnownFields {
    /// Compiles the fields `schema` names, following `$ref`s into `$defs` (recursive types too).
    pub(super) fn of(schema: &Value) -> Self {
        let mut compiler = Compiler {
            root: schema,
            nodes: Vec::new(),
            references: HashMap::new(),
        };
        // The root first, so it is node 0.
        let root = compiler.reserve();
        let node = compiler.node(schema);
        compiler.nodes[root] = node;
        KnownFields {
            nodes: compiler.nodes,
        }
    }

    /// Whether every field in `raw` (a JSON text) is one the schema names or lets in. `false` as
    /// well when it cannot tell, or `raw` is no JSON: the strict parser then decides.
    pub(super) fn only_known(&self, raw: &str) -> bool {
        let mut deserializer = serde_json::Deserializer::from_str(raw);
        Pass {
            tree: self,
            node: 0,
        }
        .deserialize(&mut deserializer)
        .unwrap_or(false)
    }

    /// Node `id`, with references followed.
    fn get(&self, mut id: usize) -> &Node {
        for _ in 0..MAX_HOPS {
            match &self.nodes[id] {
                Node::Same(next) => id = *next,
                node => return node,
            }
        }
        &Node::Open
    }
}

struct Compiler<'a> {
    root: &'a Value,
    nodes: Vec<Node>,
    /// The node each reference stands for, so a recursive type compiles once.
    references: HashMap<&'a str, usize>,
}

impl<'a> Compiler<'a> {
    fn reserve(&mut self) -> usize {
        self.nodes.push(Node::Open);
        self.nodes.len() - 1
    }

    /// A node for `schema`, its id.
    fn compile(&mut self, schema: &'a Value) -> usize {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            if let Some(&id) = self.references.get(reference) {
                return id;
            }
            let id = self.reserve();
            self.references.insert(reference, id);
            let target = reference
                .strip_prefix('#')
                .and_then(|pointer| self.root.pointer(pointer));
            self.nodes[id] = match target {
                Some(target) => Node::Same(self.compile(target)),
                None => Node::Open,
            };
            return id;
        }
        let node = self.node(schema);
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn node(&mut self, schema: &'a Value) -> Node {
        let branches = ["anyOf", "oneOf"]
            .iter()
            .find_map(|keyword| schema.get(keyword).and_then(Value::as_array));
        if let Some(branches) = branches {
            let mut objects = branches.iter().filter(|branch| self.is_object(branch));
            return match (objects.next(), objects.next()) {
                (None, _) => Node::Open,
                (Some(object), None) => Node::Same(self.compile(object)),
                (Some(_), Some(_)) => Node::Undecided,
            };
        }
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            let fields = properties
                .iter()
                .map(|(name, field)| (name.clone(), self.compile(field)))
                .collect();
            return Node::Object {
                fields,
                closed: is_closed(schema),
            };
        }
        match schema.get("items") {
            Some(items) if items.is_object() => Node::List {
                items: self.compile(items),
            },
            _ => Node::Open,
        }
    }

    /// Whether a branch describes an object with fields (following a reference).
    fn is_object(&self, branch: &'a Value) -> bool {
        let mut branch = branch;
        for _ in 0..MAX_HOPS {
            match branch.get("$ref").and_then(Value::as_str) {
                Some(reference) => {
                    match reference
                        .strip_prefix('#')
                        .and_then(|pointer| self.root.pointer(pointer))
                    {
                        Some(target) => branch = target,
                        None => return false,
                    }
                }
                None => return branch.get("properties").is_some(),
            }
        }
        false
    }
}

/// The pass at one node of the tree: `true` when everything below is known.
struct Pass<'a> {
    tree: &'a KnownFields,
    node: usize,
}

impl<'de> DeserializeSeed<'de> for Pass<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Pass<'_> {
    type Value = bool;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_str<E>(self, _: &str) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<bool, A::Error> {
        let node = match self.tree.get(self.node) {
            Node::List { items } if !matches!(self.tree.get(*items), Node::Open) => items,
            _ => {
                while items.next_element::<IgnoredAny>()?.is_some() {}
                return Ok(true);
            }
        };
        let mut known = true;
        while let Some(item) = items.next_element_seed(Pass {
            tree: self.tree,
            node: *node,
        })? {
            known &= item;
        }
        Ok(known)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<bool, A::Error> {
        let (fields, closed) = match self.tree.get(self.node) {
            Node::Object { fields, closed } => (fields, *closed),
            node => {
                while entries.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                return Ok(!matches!(node, Node::Undecided));
            }
        };
        let mut known = true;
        while let Some(field) = entries.next_key_seed(FieldName { fields })? {
            match field {
                // Nothing to look at below: skipped, which is cheaper than read.
                Some(node) if matches!(self.tree.get(node), Node::Open) => {
                    entries.next_value::<IgnoredAny>()?;
                }
                Some(node) => {
                    known &= entries.next_value_seed(Pass {
                        tree: self.tree,
                        node,
                    })?;
                }
                None => {
                    known &= !closed;
                    entries.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(known)
    }
}

/// Reads a field's name and gives its node, if the object names it.
struct FieldName<'a> {
    fields: &'a [(String, usize)],
}

impl<'de> DeserializeSeed<'de> for FieldName<'_> {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for FieldName<'_> {
    type Value = Option<usize>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a field name")
    }

    fn visit_str<E>(self, name: &str) -> Result<Self::Value, E> {
        // A linear scan: an object has a handful of fields.
        Ok(self
            .fields
            .iter()
            .find(|(field, _)| field == name)
            .map(|(_, node)| *node))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_pass_finds_unknown_fields_at_any_depth() {
        let tree = KnownFields::of(&json!({
            "type": "object",
            "properties": {
                "name": { "type": "string" },
                "home": { "anyOf": [{ "$ref": "#/$defs/Place" }, { "type": "null" }] },
                "visits": { "type": "array", "items": { "$ref": "#/$defs/Place" } },
                "tags": { "type": "object", "additionalProperties": { "type": "string" } },
                "pet": { "oneOf": [
                    { "type": "object", "properties": { "Cat": {} }, "required": ["Cat"] },
                    { "type": "object", "properties": { "Dog": {} }, "required": ["Dog"] }
                ] },
                "boss": { "$ref": "#/$defs/Person" }
            },
            "$defs": {
                "Place": { "type": "object", "properties": { "city": { "type": "string" } } },
                "Person": { "type": "object", "properties": {
                    "name": { "type": "string" },
                    "boss": { "anyOf": [{ "$ref": "#/$defs/Person" }, { "type": "null" }] }
                } }
            }
        }));
        let known = |raw: &str| tree.only_known(raw);
        assert!(known(
            r#"{"name":"Li","home":{"city":"Xi'an"},"visits":[{"city":"Hefei"}]}"#
        ));
        assert!(known(r#"{"home":null,"tags":{"any":"key","goes":"here"}}"#));
        assert!(known(r#"{"na\u006de":"escaped but known"}"#));
        assert!(known(
            r#"{"boss":{"name":"A","boss":{"name":"B","boss":null}}}"#
        ));
        assert!(!known(r#"{"nmae":"Li"}"#));
        assert!(!known(r#"{"home":{"ctiy":"Xi'an"}}"#));
        assert!(!known(r#"{"visits":[{"city":"Hefei"},{"town":"Wuhu"}]}"#));
        assert!(!known(r#"{"boss":{"name":"A","boss":{"nmae":"B"}}}"#));
        // Two shapes of object to choose from: the pass cannot tell, the strict parser decides.
        assert!(!known(r#"{"pet":{"Cat":{}}}"#));
        assert!(!known(r#"{"name": "#));
    }

    #[test]
    fn a_reference_to_itself_is_open_rather_than_endless() {
        let tree = KnownFields::of(&json!({
            "type": "object",
            "properties": { "loop": { "$ref": "#/$defs/Loop" } },
            "$defs": { "Loop": { "$ref": "#/$defs/Loop" } }
        }));
        assert!(tree.only_known(r#"{"loop":{"anything":1}}"#));
    }
}
